// Screenshots of every page for a visual check: node tests/e2e/shots.mjs <base-url> <out-dir> [width]
import { chromium } from "playwright-core";
const [base, out, width = "1280"] = process.argv.slice(2);
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || "/usr/bin/chromium", headless: true, args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"] });
const page = await browser.newPage({ viewport: { width: Number(width), height: 900 } });
page.on("pageerror", (e) => console.log("PAGE ERROR", e.stack || e));
page.on("console", (m) => m.type() === "error" && console.log("console:", m.text()));
const runs = await (await fetch(`${base}/api/runs`)).json();
const pages = ["#/runs", "#/new", ...runs.runs.slice(0, 2).map((r) => `#/runs/${r.id}`), "#/play", "#/tournament", "#/settings"];
for (const [i, hash] of pages.entries()) {
  await page.goto(`${base}/${hash}`);
  await page.waitForTimeout(hash.startsWith("#/runs/") ? 2500 : 1200);
  await page.screenshot({ path: `${out}/${i}-${hash.replace(/[^a-z]/g, "")}-${width}.png`, fullPage: true });
  console.log("shot", hash);
}
await browser.close();
