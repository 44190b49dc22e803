// The screenshots in the docs, made anew: node tests/e2e/doc-shots.mjs <base-url> <out-dir>
// Needs a server on an empty database: it starts two small runs to compare, then watches a
// game, then an SPRT test. Writes screenshot-compare.png, screenshot-play.png and
// screenshot-sprt.png.
import { chromium } from "playwright-core";

const [base, out] = process.argv.slice(2);
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || "/usr/bin/chromium", headless: true, args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"] });
const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
const post = async (path, body) => {
  const resp = await fetch(`${base}/api/${path}`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
  return resp.json();
};
const wait = async (id) => {
  for (;;) {
    const run = await (await fetch(`${base}/api/runs/${id}`)).json();
    if (!["queued", "running"].includes(run.status)) return run;
    await new Promise((r) => setTimeout(r, 500));
  }
};
const a = await post("runs", { name: "round robin, depth 3", config: { population: 8, depth: 3, generations: 25, seed: 1, benchmark: { pairs: 8 } } });
const b = await post("runs", { name: "vs opponents, depth 3", config: { population: 8, depth: 3, generations: 25, seed: 1, fitness: { mode: "opponents", opponents: ["minimax:3", "greedy"], games_per_pair: 8 }, benchmark: { pairs: 8 } } });
await wait(a.id);
await wait(b.id);
await page.goto(`${base}/#/compare?ids=${a.id},${b.id}`);
await page.locator("#compare-best .uplot").waitFor();
await page.waitForTimeout(800);
await page.screenshot({ path: `${out}/screenshot-compare.png`, fullPage: true });

await page.goto(`${base}/#/play?mode=watch`);
await page.locator("#board .pit").first().waitFor();
for (const [side, spec] of [["south", "heuristic:hunter10:published:4"], ["north", "minimax:4"]]) {
  await page.selectOption(`#watch-${side}`, "custom");
  await page.fill(`#watch-${side}-custom`, spec);
}
await page.fill("#play-speed", "300");
await page.click("#new-game");
await page.waitForFunction(() => document.querySelectorAll("#move-log li").length >= 14);
await page.click("#watch-pause").catch(() => {});
await page.waitForTimeout(400);
await page.screenshot({ path: `${out}/screenshot-play.png`, fullPage: false });
const test = await post("sprt-tests", { a: "minimax:3", b: "greedy", sprt: "0,20", name: "minimax:3 against greedy" });
await page.goto(`${base}/#/sprt?id=${test.id}`);
await page.locator(".title-line .badge", { hasText: /finished|cancelled|failed/ }).waitFor({ timeout: 120000 });
await page.waitForTimeout(400);
await page.screenshot({ path: `${out}/screenshot-sprt.png`, fullPage: true });
await browser.close();
console.log(`wrote ${out}/screenshot-compare.png, ${out}/screenshot-play.png and ${out}/screenshot-sprt.png`);
