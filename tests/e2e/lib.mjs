// What the smaller browser scripts share (dashboard.mjs predates it and keeps its own copy):
// the browser, steps that report as dashboard.mjs's do, and checks.
//
//   node tests/e2e/<script>.mjs <base-url>
//
// Env: CHROMIUM (browser binary, default /usr/bin/chromium), E2E_TIMEOUT_MS (per wait,
// default 120000).

import { createRequire } from "node:module";
import { chromium } from "playwright-core";

const axePath = createRequire(import.meta.url).resolve("axe-core/axe.min.js");

export const base = (process.argv[2] || "").replace(/\/+$/, "");
if (!base) {
  console.error("usage: node tests/e2e/<script>.mjs <base-url>");
  process.exit(2);
}
export const TIMEOUT = Number(process.env.E2E_TIMEOUT_MS || 120000);

let passed = 0;
let failed = 0;
export const pageErrors = [];

export async function step(name, fn) {
  const t0 = Date.now();
  try {
    await fn();
    passed++;
    console.log(`ok   ${name} (${Date.now() - t0} ms)`);
  } catch (e) {
    failed++;
    console.log(`FAIL ${name}: ${e && e.stack ? e.stack : e}`);
    throw e;
  }
}

export function check(cond, message) {
  if (!cond) throw new Error(message);
}

/** Opens Chromium and a page at 1280 x 860, runs `body(page, context)`, and exits with its verdict. */
export async function withBrowser(name, body) {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    headless: true,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-quic", "--disable-dev-shm-usage"],
  });
  let exitCode = 0;
  try {
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 }, acceptDownloads: true });
    context.setDefaultTimeout(TIMEOUT);
    const page = await context.newPage();
    page.on("pageerror", (e) => pageErrors.push(String(e && e.stack ? e.stack : e)));
    page.on("console", (msg) => {
      if (msg.type() === "error") console.log(`     console error: ${msg.text()}`);
    });
    await body(page, context);
    check(pageErrors.length === 0, `uncaught errors in the page:\n${pageErrors.join("\n")}`);
  } catch (e) {
    exitCode = 1;
    if (failed === 0) console.log(`FAIL ${e && e.stack ? e.stack : e}`);
    if (pageErrors.length) console.log(`page errors:\n${pageErrors.join("\n")}`);
  } finally {
    await browser.close();
  }
  console.log(`${name}: ${passed} passed, ${failed} failed`);
  process.exit(exitCode);
}

/** A JSON request from inside the page (same origin, the page's token if any). */
export async function api(page, method, path, body) {
  return page.evaluate(
    async ({ method, path, body }) => {
      const resp = await fetch(path, {
        method,
        headers: body === undefined ? {} : { "Content-Type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await resp.text();
      let json = null;
      try {
        json = JSON.parse(text);
      } catch {}
      return { status: resp.status, body: json, text };
    },
    { method, path, body },
  );
}

/** axe-core's serious and critical violations on the page as it is now, one text each. */
export async function axeViolations(page) {
  if (!(await page.evaluate(() => typeof window.axe === "object"))) await page.addScriptTag({ path: axePath });
  return page.evaluate(async () => {
    const result = await window.axe.run(document, { resultTypes: ["violations"] });
    return result.violations
      .filter((v) => v.impact === "serious" || v.impact === "critical")
      .map((v) => `${v.impact} ${v.id}: ${v.help}\n       ${v.nodes.slice(0, 4).map((n) => `${n.target.join(" ")}: ${(n.failureSummary || "").replace(/\s+/g, " ").slice(0, 220)}`).join("\n       ")}`);
  });
}

/** Sets the dashboard's theme and loads the page again (the theme is read at load). */
export async function setTheme(page, theme) {
  await page.evaluate((t) => localStorage.setItem("kalah-tuner-theme", t), theme);
  await page.reload();
}
