// End-to-end test of the dashboard in a real headless Chromium, driven by playwright-core.
//
//   node tests/e2e/dashboard.mjs <base-url> [screenshot.png]
//
// Needs a running server on a fresh database (tests/server/dashboard.rs starts one). Env:
// CHROMIUM (browser binary, default /usr/bin/chromium), E2E_TIMEOUT_MS (per step, default
// 120000). Exits non-zero on the first failed check or on any uncaught page error.

import { chromium } from "playwright-core";
import { mkdirSync, readFileSync } from "node:fs";
import { dirname } from "node:path";

let base = (process.argv[2] || "").replace(/\/+$/, "");
const screenshot = process.argv[3] || "";
if (!base) {
  console.error("usage: node tests/e2e/dashboard.mjs <base-url> [screenshot.png]");
  process.exit(2);
}
const TIMEOUT = Number(process.env.E2E_TIMEOUT_MS || 120000);
const executablePath = process.env.CHROMIUM || "/usr/bin/chromium";

/**
 * Asks the test that started the server to kill it and start another on the same database
 * (tests/server/dashboard.rs), and carries on against the new address.
 */
async function restartServer() {
  console.log("RESTART-SERVER");
  const line = await new Promise((resolve, reject) => {
    let text = "";
    const onData = (chunk) => {
      text += chunk;
      const end = text.indexOf("\n");
      if (end >= 0) {
        process.stdin.off("data", onData);
        process.stdin.pause();
        resolve(text.slice(0, end).trim());
      }
    };
    process.stdin.setEncoding("utf8");
    process.stdin.on("data", onData);
    process.stdin.once("end", () => reject(new Error("no new server address: run this script through tests/server/dashboard.rs")));
    process.stdin.resume();
  });
  base = line.replace(/\/+$/, "");
  console.log(`     the server restarted at ${base}`);
}

let passed = 0;
let failed = 0;
const pageErrors = [];

async function step(name, fn) {
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

function check(cond, message) {
  if (!cond) throw new Error(message);
}

const browser = await chromium.launch({
  executablePath,
  headless: true,
  args: [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
    "--disable-dev-shm-usage",
  ],
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

  await step("runs page loads on a fresh database", async () => {
    await page.goto(`${base}/`);
    await page.locator("h1", { hasText: "Runs" }).waitFor();
    await page.locator("p.empty", { hasText: "No runs yet" }).waitFor();
    // A newcomer is told what a run is and what Play and Tournament do.
    check(await page.locator("#intro").evaluate((d) => d.open), "the introduction is folded on an empty server");
    check(/run/.test(await page.textContent("#intro")) && /Tournament/.test(await page.textContent("#intro")), "no introduction");
  });

  await step("new run form shows the API's validation message next to the field", async () => {
    await page.click('#nav a[data-route="new"]');
    await page.locator("#f-population").waitFor();
    check((await page.inputValue("#f-population")) === "20", "population default is not 20");
    await page.fill("#f-population", "0");
    await page.click("#start-run");
    const err = page.locator("#err-population");
    await err.filter({ hasText: /population/ }).waitFor();
    check(await page.locator('.field[data-key="population"].invalid').isVisible(), "population field is not marked invalid");
    check((await page.getAttribute("#f-population", "aria-describedby")) === "err-population", "the field's message is not tied to it (aria-describedby)");
  });

  await step("the new run form reports every bad field at once, in words", async () => {
    await page.fill("#f-population", "0");
    await page.fill("#f-depth", "99");
    await page.fill("#f-generations", "12.5");
    await page.click("#start-run");
    await page.locator("#err-depth", { hasText: "depth" }).waitFor();
    for (const key of ["population", "depth", "generations"]) {
      check(await page.locator(`.field[data-key="${key}"].invalid`).isVisible(), `${key} is not marked invalid`);
    }
    const generations = (await page.textContent("#err-generations")) || "";
    check(/whole number/.test(generations), `12.5 generations: ${generations}`);
    check(!/invalid type|expected/.test(generations), `a parser's message: ${generations}`);
    const estimate = (await page.textContent(".estimate")) || "";
    check(!/-0|NaN/.test(estimate), `estimate of a bad config: ${estimate}`);
    await page.fill("#f-generations", "30");
    // Rules between two fields are checked here too, and text that is not a number is not "none".
    await page.fill("#f-population", "6");
    await page.fill("#f-depth", "2");
    await page.fill("#f-elite", "6");
    await page.fill("#f-stagnation", "");
    await page.locator("#f-stagnation").focus();
    await page.keyboard.type("1e-");
    await page.click("#start-run");
    await page.locator("#err-elite", { hasText: "below the population" }).waitFor();
    await page.locator("#err-stagnation", { hasText: "must be a number" }).waitFor();
    await page.fill("#f-elite", "1");
    await page.fill("#f-stagnation", "");
    // The other rule between two fields: the bounds' minimum below their maximum.
    const [boundsMin, boundsMax] = [await page.inputValue("#f-bounds-min"), await page.inputValue("#f-bounds-max")];
    await page.fill("#f-bounds-min", "0.8");
    await page.fill("#f-bounds-max", "0.2");
    await page.click("#start-run");
    await page.locator('[id="err-bounds.max"]', { hasText: "must be above bounds.min (0.8)" }).waitFor();
    check(/^#\/new/.test(new URL(page.url()).hash), "a run was started with min above max");
    await page.fill("#f-bounds-min", boundsMin);
    await page.fill("#f-bounds-max", boundsMax);
    // A bad value says so as soon as the field is left, before any submit; a good one clears it.
    await page.fill("#f-population", "-3");
    await page.locator("#f-population").dispatchEvent("change");
    await page.locator("#err-population", { hasText: "got -3" }).waitFor();
    await page.fill("#f-population", "6");
    await page.locator("#f-population").dispatchEvent("change");
    await page.locator('.field[data-key="population"]:not(.invalid)').waitFor();
  });

  await step("the form's cost estimate is the server's dry run of the run", async () => {
    await page.fill("#f-generations", "30");
    await page.locator("#f-generations").dispatchEvent("change");
    await page.locator(".estimate", { hasText: "30 generations" }).waitFor();
    const text = (await page.textContent(".estimate")) || "";
    check(/processor time/.test(text) && /refuses more than 48/.test(text), `estimate: ${text}`);
  });

  await step("the estimate groups thousands, says why an impossible board has none, and is near the measured time for abrams", async () => {
    const estimate = page.locator(".estimate");
    const changeTo = async (id, value) => {
      await page.fill(id, value);
      await page.locator(id).dispatchEvent("change");
    };
    await page.fill("#f-population", "4");
    await page.fill("#f-depth", "1");
    await changeTo("#f-generations", "10000");
    await estimate.filter({ hasText: /^10,000 generations; .* processor time/ }).waitFor();
    // No pits: the form's own check says why, and no figure is shown.
    await changeTo("#f-board-pits", "0");
    await estimate.filter({ hasText: /^No estimate: board\.pits: must be 1 to 12, got 0/ }).waitFor();
    check(!/generations;|processor time|MB/.test((await estimate.textContent()) || ""), `a figure for 0 pits: ${await estimate.textContent()}`);
    // Seeds past what a board holds: the server's check says why, again without a figure.
    await changeTo("#f-board-pits", "6");
    await changeTo("#f-board-seeds", "500");
    await estimate.filter({ hasText: /^No estimate, not a valid run: .*impossible board/ }).waitFor();
    check(!/generations;|processor time|MB/.test((await estimate.textContent()) || ""), `a figure for 6 x 500 seeds: ${await estimate.textContent()}`);
    // A whole abrams run took 969 s of processor time (docs/results.md, headline figures):
    // the form's figure is to be within 2x of it, on a fresh form.
    await page.click('#nav a[data-route="runs"]');
    await page.click('#nav a[data-route="new"]');
    await page.locator("#f-preset").waitFor();
    await page.selectOption("#f-preset", "abrams");
    await estimate.filter({ hasText: /^75 generations; .* processor time/ }).waitFor();
    const text = (await estimate.textContent()) || "";
    const m = text.match(/about ([\d.,]+) (minutes|hours)/);
    check(m, `the abrams estimate gives no time: ${text}`);
    const seconds = Number(m[1].replace(/,/g, "")) * (m[2] === "hours" ? 3600 : 60);
    const measured = 969;
    console.log(`     abrams: "${text}" (${(seconds / measured).toFixed(2)} of the measured ${measured} s)`);
    check(seconds >= measured / 2 && seconds <= measured * 2, `the abrams estimate ${seconds} s is not within 2x of the measured ${measured} s`);
    // Back to a form without a preset for the next step.
    await page.click('#nav a[data-route="runs"]');
    await page.click('#nav a[data-route="new"]');
    await page.locator("#f-preset").waitFor();
  });

  let runUrl = "";
  await step("create a run through the form", async () => {
    await page.fill("#f-name", "e2e tiny run");
    await page.fill("#f-population", "6");
    await page.fill("#f-depth", "2");
    await page.fill("#f-generations", "30");
    // Enough games a generation that the run lasts a few seconds and can be watched live.
    await page.fill("#f-fitness-games_per_pair", process.env.E2E_GAMES_PER_PAIR || "80");
    await page.click("#start-run");
    await page.waitForURL(/#\/runs\/[^/]+$/);
    runUrl = page.url();
    await page.locator("#chart-fitness .uplot").waitFor();
  });

  await step("the fitness curve gains points while the run is going, without a reload", async () => {
    await page.evaluate(() => (window.__e2eNoReload = true));
    const count = async () => {
      const t = (await page.textContent("#gen-count")) || "";
      return Number((t.match(/\d+/) || ["0"])[0]);
    };
    // A point while the run is still running...
    const deadline = Date.now() + TIMEOUT;
    let first = 0;
    while (Date.now() < deadline) {
      const status = (await page.textContent(".title-line .badge")) || "";
      first = await count();
      if (first > 0 && status.includes("running")) break;
      check(!/finished|failed|cancelled/.test(status) || first > 0, `run ended as ${status} before any generation`);
      check(!/finished/.test(status), "the run finished before the page saw it running: make it longer (E2E_GAMES_PER_PAIR)");
      await page.waitForTimeout(100);
    }
    check(first > 0, "no generation appeared on the chart");
    // ...and then more points, pushed by the event stream.
    await page.waitForFunction(
      (n) => Number(((document.querySelector("#gen-count") || {}).textContent || "0").match(/\d+/)?.[0] || 0) > n,
      first,
      { timeout: TIMEOUT },
    );
    const later = await count();
    check(later > first, "the chart did not grow");
    check(await page.evaluate(() => window.__e2eNoReload === true), "the page reloaded");
    console.log(`     chart went from ${first} to ${later} generations live`);
    // Some uPlot series paths must exist: the canvas is drawn, not blank.
    const drawn = await page.evaluate(() => {
      const c = document.querySelector("#chart-fitness canvas");
      if (!c) return false;
      const d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
      for (let i = 3; i < d.length; i += 4) if (d[i] !== 0) return true;
      return false;
    });
    check(drawn, "the fitness canvas is blank");
  });

  await step("the benchmark panel chart comes first and names the champion", async () => {
    await page.locator("#chart-panel .uplot").waitFor();
    await page.waitForFunction(
      () => /leader .*champion from generation \d+/.test((document.querySelector("#panel-info") || {}).textContent || ""),
      null,
      { timeout: TIMEOUT },
    );
    const order = await page.evaluate(() => {
      const panel = document.querySelector("#chart-panel");
      const fitness = document.querySelector("#chart-fitness");
      return panel && fitness ? panel.compareDocumentPosition(fitness) & Node.DOCUMENT_POSITION_FOLLOWING : 0;
    });
    check(order !== 0, "the panel chart is not above the fitness chart");
    console.log(`     ${await page.textContent("#panel-info")}`);
    // A run without benchmark.agreement has no agreement card, and no stray text in its place.
    const stray = await page.evaluate(() => [...document.querySelector("main .page").childNodes].filter((n) => n.nodeType === Node.TEXT_NODE && n.textContent.trim()).map((n) => n.textContent));
    check(stray.length === 0, `text between the run page's cards: ${JSON.stringify(stray)}`);
    check(!/\bnull\b/.test(await page.evaluate(() => document.querySelector("main").innerText)), "the run page shows the text null");
  });

  await step("screenshot of the run page with live curves", async () => {
    // A few more generations make a better picture; don't wait for the end.
    await page
      .waitForFunction(() => Number((document.querySelector("#gen-count")?.textContent || "0").match(/\d+/)?.[0] || 0) >= 12, null, { timeout: 30000 })
      .catch(() => {});
    await page.evaluate(() => window.scrollTo(0, 0));
    if (screenshot) {
      mkdirSync(dirname(screenshot), { recursive: true });
      await page.screenshot({ path: screenshot });
      console.log(`     saved ${screenshot}`);
    }
  });

  await step("the population table of a generation sorts by a column", async () => {
    await page.locator("table.population tbody tr").first().waitFor();
    const rows = await page.locator("table.population tbody tr").count();
    check(rows === 6, `population table has ${rows} rows, expected 6`);
    await page.click("table.population thead th:nth-child(1)");
    const firsts = await page.$$eval("table.population tbody tr td:first-child", (tds) => tds.map((t) => Number(t.textContent)));
    check(JSON.stringify(firsts) === JSON.stringify([...firsts].sort((a, b) => a - b)), `not sorted by #: ${firsts}`);
    // By keyboard: the header is a button; aria-sort says the order.
    await page.locator('table.population thead th[data-col="fitness"] button').focus();
    await page.keyboard.press("Enter");
    check((await page.getAttribute('table.population thead th[data-col="fitness"]', "aria-sort")) === "descending", "aria-sort after sorting by fitness");
    // One arrow for the sorted column, not two.
    const arrows = await page.evaluate(() => {
      const th = document.querySelector('table.population thead th[data-col="fitness"]');
      return [getComputedStyle(th, "::after").content, getComputedStyle(th.querySelector("button"), "::after").content];
    });
    check(["none", "normal"].includes(arrows[0]) && /▼/.test(arrows[1]), `sort arrows: ${JSON.stringify(arrows)}`);
  });

  await step("charts carry a text alternative, and the legend says it hides lines", async () => {
    const label = (await page.getAttribute("#chart-fitness", "aria-label")) || "";
    check(/^Fitness, \d+ generations; at generation \d+: best /.test(label), `fitness chart's text: ${label}`);
    check((await page.getAttribute("#chart-fitness", "role")) === "figure", "the chart is not a figure");
    // The legend works from the keyboard: its names are buttons that hide and show lines.
    const legend = page.locator("#chart-fitness .u-legend tr.u-series:nth-child(2) th");
    check((await legend.getAttribute("tabindex")) === "0" && (await legend.getAttribute("role")) === "button", "the legend cannot be reached by Tab");
    await legend.focus();
    await page.keyboard.press("Enter");
    check((await page.evaluate(() => document.querySelector("#chart-fitness").uplot.series[1].show)) === false, "Enter on the legend did not hide the line");
    check((await legend.getAttribute("aria-pressed")) === "false", "aria-pressed does not follow the legend");
    await page.keyboard.press(" ");
    check((await page.evaluate(() => document.querySelector("#chart-fitness").uplot.series[1].show)) === true, "Space on the legend did not show the line again");
    check(/legend to hide or show/.test(await page.evaluate(() => document.body.innerText)), "no word on the legend");
  });

  await step("zooming one chart zooms the others; the weights chart shows the features picked", async () => {
    // The run is still live: a generation that arrives redraws the charts, and may do so
    // between the zoom and the reading. Zoom again then (a few tries), as a user would.
    let scales = [];
    for (let attempt = 0; attempt < 5; attempt++) {
      await page.evaluate(() => document.querySelector("#chart-fitness").uplot.setScale("x", { min: 1, max: 3 }));
      scales = await page.evaluate(() =>
        ["#chart-panel", "#chart-diversity", "#chart-weights"].map((id) => {
          const x = document.querySelector(id).uplot.scales.x;
          return [x.min, x.max];
        }),
      );
      if (scales.every(([lo, hi]) => lo === 1 && hi === 3)) break;
      await page.waitForTimeout(300);
    }
    check(scales.every(([lo, hi]) => lo === 1 && hi === 3), `linked charts show ${JSON.stringify(scales)}`);
    await page.locator("#feature-picker summary").click();
    await page.click("#features-none");
    await page.locator("#feature-picker input").first().check();
    const shown = await page.evaluate(() => document.querySelector("#chart-weights").uplot.series.slice(1).map((s) => s.show));
    check(shown[0] === true && shown.slice(1).every((v) => v === false), `series shown: ${shown}`);
    await page.click("#features-all");
    // A tall drag zooms the values as well; a double-click resets both.
    await page.evaluate(() => document.querySelector("#chart-fitness").uplot.setData(document.querySelector("#chart-fitness").uplot.data));
    await page.locator("#chart-fitness").scrollIntoViewIfNeeded();
    const over = await page.locator("#chart-fitness .u-over").boundingBox();
    const span = () => page.evaluate(() => { const y = document.querySelector("#chart-fitness").uplot.scales.y; return y.max - y.min; });
    const before = await span();
    await page.mouse.move(over.x + over.width * 0.2, over.y + over.height * 0.3);
    await page.mouse.down();
    await page.mouse.move(over.x + over.width * 0.6, over.y + over.height * 0.5, { steps: 5 });
    await page.mouse.up();
    const zoomed = await span();
    check(zoomed < before * 0.5, `a tall drag did not zoom the values: ${before} -> ${zoomed}`);
    await page.mouse.dblclick(over.x + over.width * 0.5, over.y + over.height * 0.5);
    await page.waitForFunction((b) => { const y = document.querySelector("#chart-fitness").uplot.scales.y; return Math.abs((y.max - y.min) - b) < 1e-9; }, before);
    // A log scale for positive values, and back; the chart still picks generations on click.
    await page.check("#diversity-log");
    check((await page.evaluate(() => document.querySelector("#chart-diversity").uplot.scales.y.distr)) === 3, "the diversity axis is not logarithmic");
    await page.uncheck("#diversity-log");
    check((await page.evaluate(() => document.querySelector("#chart-diversity").uplot.scales.y.distr)) === 1, "the diversity axis stayed logarithmic");
    await page.check("#fitness-log");
    await page.locator("#chart-fitness .u-over").click();
    await page.uncheck("#fitness-log");
  });

  await step("the colour theme toggles and is remembered", async () => {
    const before = await page.evaluate(() => document.documentElement.dataset.theme);
    await page.click("#theme-toggle");
    const after = await page.evaluate(() => document.documentElement.dataset.theme);
    check(before !== after && ["dark", "light"].includes(after), `theme ${before} -> ${after}`);
    const bg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    await page.reload();
    await page.locator("#chart-fitness .uplot").waitFor();
    check((await page.evaluate(() => document.documentElement.dataset.theme)) === after, "the choice is not remembered");
    check((await page.evaluate(() => getComputedStyle(document.body).backgroundColor)) === bg, "the colours changed on reload");
    await page.click("#theme-toggle");
    // Every chart colour stands out 3:1 from the cards and pages of both themes.
    const weak = await page.evaluate(async () => {
      const { PALETTE } = await import(new URL("js/util.js", document.baseURI).href);
      const lum = (hex) => {
        const [r, g, b] = [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16) / 255).map((c) => (c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4));
        return 0.2126 * r + 0.7152 * g + 0.0722 * b;
      };
      const ratio = (a, b) => { const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p); return (x + 0.05) / (y + 0.05); };
      const css = (theme) => {
        const root = document.documentElement;
        const was = root.dataset.theme;
        root.dataset.theme = theme;
        const s = getComputedStyle(root);
        const out = ["--card", "--bg"].map((v) => s.getPropertyValue(v).trim());
        root.dataset.theme = was;
        return out;
      };
      const backgrounds = [...css("light"), ...css("dark")];
      return PALETTE.flatMap((c) => backgrounds.filter((b) => ratio(c, b) < 3).map((b) => `${c} on ${b}: ${ratio(c, b).toFixed(2)}`));
    });
    check(weak.length === 0, `chart colours under 3:1: ${weak.join(", ")}`);
  });

  await step("the run finishes and the export downloads as JSON", async () => {
    await page.locator(".title-line .badge", { hasText: "finished" }).waitFor();
    const [download] = await Promise.all([page.waitForEvent("download"), page.click("#export-download")]);
    const path = await download.path();
    const doc = JSON.parse(readFileSync(path, "utf8"));
    check(doc.format_version === 1, `format_version is ${doc.format_version}`);
    check(Array.isArray(doc.weights) && doc.weights.length === doc.features.length, "export has no weights per feature");
    check(/kalah-tuner-.*\.json$/.test(download.suggestedFilename()), `download name ${download.suggestedFilename()}`);
    await page.click("#export-view");
    await page.locator("#export-json", { hasText: "format_version" }).waitFor();
  });

  await step("the runs page lists the finished run", async () => {
    await page.click('#nav a[data-route="runs"]');
    const row = page.locator("table.runs tbody tr", { hasText: "e2e tiny run" });
    await row.waitFor();
    await row.locator(".badge", { hasText: "finished" }).waitFor();
    check((await row.textContent()).includes("30 / 30"), "progress is not 30 / 30");
  });

  await step("an unknown run id gets a page that says so", async () => {
    await page.goto(`${base}/#/runs/00000000-0000-0000-0000-000000000000`);
    await page.locator("#run-not-found", { hasText: "No such run" }).waitFor();
    check(!(await page.locator("#flash.show.error").count()), "a red banner instead of a page");
  });

  await step("a queued run says it waits, and a one-generation run has whole-number axes", async () => {
    const post = (body) =>
      page.evaluate(async (body) => {
        const resp = await fetch("/api/runs", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
        return resp.json();
      }, body);
    const blocker = await post({ name: "e2e blocker", config: { population: 8, depth: 3, generations: 10000, fitness: { games_per_pair: 20 } } });
    const single = await post({ name: "e2e one generation", config: { population: 4, depth: 1, generations: 1 } });
    await page.goto(`${base}/#/runs/${single.id}`);
    await page.locator("#queue-note", { hasText: "Queued" }).waitFor();
    await page.evaluate((id) => fetch(`/api/runs/${id}/cancel`, { method: "POST", headers: { "Content-Type": "application/json" }, body: "{}" }), blocker.id);
    await page.locator(".title-line .badge", { hasText: "finished" }).waitFor();
    check(await page.locator("#queue-note").isHidden(), "the queue note stays after the run started");
    await page.waitForFunction(() => (document.querySelector("#chart-fitness")?.uplot?.data?.[0]?.length || 0) >= 1);
    const axis = await page.evaluate(() => {
      const u = document.querySelector("#chart-fitness").uplot;
      return { min: u.scales.x.min, max: u.scales.x.max, ticks: (u.axes[0]._values || []).map(String) };
    });
    check(axis.min === 0 && axis.max === 1, `one generation spans ${axis.min} to ${axis.max}`);
    check(axis.ticks.every((t) => /^-?\d*$/.test(t)), `fractional generation ticks: ${axis.ticks.join(", ")}`);
    await page.locator("#pop-gen").fill("0");
    await page.locator("#pop-gen").dispatchEvent("change");
    const info = page.locator("#population-info", { hasText: "games" });
    await info.waitFor();
    check(!/ in 0 s/.test((await info.textContent()) || ""), `duration: ${await info.textContent()}`);
  });

  await step("a run page says when the server cannot be reached, and reconnects", async () => {
    await page.context().setOffline(true);
    await page.locator("#conn-lost").waitFor({ state: "visible" });
    check(await page.locator(".live-dot").isHidden(), "the live dot stays on without a connection");
    await page.context().setOffline(false);
    await page.locator("#conn-lost").waitFor({ state: "hidden" });
    check(!(await page.locator("#flash.show.error").count()), `an error banner stays after the reconnect: ${await page.textContent("#flash")}`);
  });

  await step("the runs list says when the server is away, and takes the banner down when it is back", async () => {
    const here = page.url();
    await page.goto(`${base}/#/runs`);
    await page.locator("table.runs tbody tr").first().waitFor();
    await page.context().setOffline(true);
    await page.locator("#flash.show.error", { hasText: "Could not load the runs" }).waitFor();
    await page.context().setOffline(false);
    await page.waitForFunction(() => !document.querySelector("#flash.show.error"), null, { timeout: 15000 });
    await page.goto(here);
    await page.locator("#chart-fitness .uplot").waitFor();
  });

  await step("a chart's data downloads as CSV, JSON and PNG", async () => {
    const fetchDownload = async (id) => {
      const [download] = await Promise.all([page.waitForEvent("download"), page.click(id)]);
      return { name: download.suggestedFilename(), text: readFileSync(await download.path(), "latin1") };
    };
    const csv = await fetchDownload("#fitness-data-csv");
    const lines = csv.text.trim().split("\n");
    check(/\.csv$/.test(csv.name), `file name ${csv.name}`);
    check(lines[0].startsWith("generation,best,mean,min"), `CSV header: ${lines[0]}`);
    check(lines.length === 2 && lines[1].startsWith("0,"), `CSV rows: ${lines.join(" / ")}`);
    const json = JSON.parse((await fetchDownload("#fitness-data-json")).text);
    check(Array.isArray(json) && json.length === 1 && json[0].generation === 0, `JSON: ${JSON.stringify(json)}`);
    const png = await fetchDownload("#fitness-data-png");
    check(png.text.startsWith("\x89PNG"), "the PNG download is not a PNG");
    // Opaque, with the chart's title and the run's name above the plot and a legend below.
    const image = await page.evaluate(async () => {
      const chart = document.querySelector("#chart-fitness").chart;
      const img = new Image();
      img.src = chart.toPng();
      await img.decode();
      const c = document.createElement("canvas");
      c.width = img.width;
      c.height = img.height;
      const ctx = c.getContext("2d");
      ctx.drawImage(img, 0, 0);
      return { corner: ctx.getImageData(0, 0, 1, 1).data[3], height: img.height, plot: chart.plot.ctx.canvas.height, title: chart.pngTitle };
    });
    check(image.corner === 255, `the PNG's background is transparent (alpha ${image.corner})`);
    check(image.height > image.plot, "the PNG has no room for a title and a legend");
    check(image.title === "e2e one generation", `the PNG names the run as ${image.title}`);
  });

  await step("rename, tag and note a run; find it by tag in the runs list, sorted by a header", async () => {
    await page.click("#run-edit");
    // Escape closes the editor, and the focus goes back to its button.
    await page.locator("#edit-name").focus();
    await page.keyboard.press("Escape");
    check(await page.locator("#run-editor").isHidden(), "Escape does not close the editor");
    check(await page.evaluate(() => document.activeElement?.id === "run-edit"), "the focus did not go back to the Edit button");
    await page.click("#run-edit");
    await page.fill("#edit-name", "e2e renamed");
    await page.fill("#edit-tags", "baseline, depth one");
    await page.fill("#edit-notes", "a note from the browser test");
    await page.click("#edit-save");
    await page.locator("h1", { hasText: "e2e renamed" }).waitFor();
    const chips = await page.locator("#run-tags .tag-chip").allTextContents();
    check(chips.join("|") === "baseline|depth one", `tags: ${chips.join("|")}`);
    await page.locator("#run-notes", { hasText: "a note from the browser test" }).waitFor();
    await page.click('#nav a[data-route="runs"]');
    await page.fill("#runs-search", "baseline");
    await page.locator("#runs-shown", { hasText: /^1 of \d+ runs$/ }).waitFor();
    const row = page.locator("table.runs tbody tr");
    check((await row.count()) === 1, "the search shows other runs");
    check(/e2e renamed/.test(await row.first().textContent()), "the renamed run is not the one found");
    check(/\d+ (ms|s)/.test((await row.first().locator('td[data-label="Duration"]').textContent()) || ""), "no duration");
    // Runs without a preset are found as "custom", as their line says.
    await page.fill("#runs-search", "custom");
    check((await page.locator("table.runs tbody tr").count()) >= 1, "the search finds nothing for custom");
    // Ids match from their start only: characters from inside this run's id find nothing,
    // the shortest prefix of the id that no other run shares finds it alone.
    const all = await page.evaluate(() => fetch("/api/runs?limit=500").then((r) => r.json()).then((j) => j.runs));
    const renamed = all.find((r) => r.name === "e2e renamed");
    check(renamed, "the renamed run is not in /api/runs");
    const starts = all.flatMap((r) => [r.id, r.id.replace(/-/g, "").slice(-8)]);
    const texts = all.map((r) => [r.name, ...(r.tags || []), r.notes, r.preset, r.tuner, r.status].filter(Boolean).join(" ").toLowerCase());
    // Four characters from inside the id (digits if it has four in a row) that start no id or
    // short id and occur in no run's text.
    const free = [...Array(renamed.id.length - 4).keys()]
      .map((i) => renamed.id.slice(i + 1, i + 5))
      .filter((w) => /^[0-9a-f]{4}$/.test(w) && !starts.some((x) => x.startsWith(w)) && !texts.some((t) => t.includes(w)));
    const inside = free.find((w) => /^\d{4}$/.test(w)) ?? free[0];
    check(inside, `no four characters inside ${renamed.id} to search for`);
    await page.fill("#runs-search", inside);
    await page.locator("#runs-shown", { hasText: /^0 of \d+ runs$/ }).waitFor();
    let n = 8;
    while (all.some((r) => r.id !== renamed.id && r.id.startsWith(renamed.id.slice(0, n)))) n++;
    await page.fill("#runs-search", renamed.id.slice(0, n));
    await page.locator("#runs-shown", { hasText: /^1 of \d+ runs$/ }).waitFor();
    check(/e2e renamed/.test((await page.locator("table.runs tbody tr").first().textContent()) || ""), `the prefix ${renamed.id.slice(0, n)} finds another run`);
    console.log(`     "${inside}" (inside ${renamed.id}) finds no run; "${renamed.id.slice(0, n)}" finds it`);
    await page.fill("#runs-search", "");
    const header = page.locator('th[data-sort="best"]');
    await header.locator("button").focus();
    await page.keyboard.press("Enter");
    check((await header.getAttribute("aria-sort")) === "descending", "sorting by keyboard does not set aria-sort");
  });

  await step("the run's config is on its page, and a new run starts from it", async () => {
    await page.goto(`${base}/#/runs`);
    await page.click("table.runs tbody tr a >> text=e2e renamed");
    await page.locator("#run-config-box summary").click();
    const config = JSON.parse((await page.textContent("#run-config")) || "{}");
    check(config.population === 4 && config.generations === 1, `config shown: ${JSON.stringify(config).slice(0, 200)}`);
    await page.click("#run-copy");
    await page.locator("#f-population").waitFor();
    await page.waitForFunction(() => document.querySelector("#f-name")?.value.includes("(copy)"));
    check((await page.inputValue("#f-population")) === "4", "population not copied");
    check((await page.inputValue("#f-depth")) === "1", "depth not copied");
    check((await page.inputValue("#f-generations")) === "1", "generations not copied");
  });

  await step("a TD-Leaf run started over the API shows its panel curve on the same run page", async () => {
    const created = await page.evaluate(async () => {
      const resp = await fetch("/api/runs", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({
          tuner: "td-leaf", preset: "ahmed", name: "e2e td-leaf run",
          config: { games: 96, checkpoint_games: 32, depth: 2, play_depth: 2, benchmark: { pairs: 2 } },
        }),
      });
      return { status: resp.status, body: await resp.json() };
    });
    check(created.status === 201, `creating the TD-Leaf run answered ${created.status}: ${JSON.stringify(created.body)}`);
    await page.goto(`${base}/#/runs/${created.body.id}`);
    await page.locator(".title-line .badge", { hasText: "finished" }).waitFor();
    await page.locator("#chart-panel .uplot").waitFor();
    const stats = (await page.textContent("dl.stats")) || "";
    const text = await page.evaluate(() => document.body.innerText);
    check(/TD-Leaf/.test(text), "the page does not name the tuner");
    check(/Checkpoints\s*4 \/ 4/.test(stats), `the page does not count 4 checkpoints: ${stats}`);
    // In a learning run's words: no population, no all-zero diversity chart.
    check(!/Relative to the population/.test(text), "a learning run's fitness is called relative to the population");
    check(await page.locator("#diversity-card").isHidden(), "a learning run shows a diversity chart");
    check(/checkpoints/.test((await page.textContent("#gen-count")) || ""), `the count: ${await page.textContent("#gen-count")}`);
    await page.click('#nav a[data-route="runs"]');
    const row = page.locator("table.runs tbody tr", { hasText: "e2e td-leaf run" });
    await row.waitFor();
    // The runs list tells a learner's panel score from a GA's population-relative fitness.
    const best = row.locator('td[data-label="Best fitness"] > span');
    check(/panel/.test((await best.textContent()) || "") && /benchmark panel/.test((await best.getAttribute("title")) || ""), `the TD-Leaf run's best: ${await best.textContent()}`);
    const gaBest = page.locator("table.runs tbody tr", { hasText: "e2e tiny run" }).locator('td[data-label="Best fitness"] > span');
    check(!/panel/.test((await gaBest.textContent()) || "") && /relative to its population/.test((await gaBest.getAttribute("title")) || ""), `the GA run's best: ${await gaBest.textContent()}`);
  });

  await step("a run that measures perfect-move agreement charts it per generation", async () => {
    const created = await page.evaluate(async () => {
      const resp = await fetch("/api/runs", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ name: "e2e agreement run", config: { population: 4, depth: 1, generations: 2, benchmark: { agreement: 20 } } }),
      });
      return { status: resp.status, body: await resp.json() };
    });
    check(created.status === 201, `creating the run answered ${created.status}: ${JSON.stringify(created.body)}`);
    await page.goto(`${base}/#/runs/${created.body.id}`);
    await page.locator(".title-line .badge", { hasText: "finished" }).waitFor();
    await page.locator("#chart-agreement .uplot").waitFor();
    await page
      .waitForFunction(
        () => /Perfect-move agreement, 2 generations; .*perfect moves % \d/.test(document.querySelector("#chart-agreement")?.getAttribute("aria-label") || ""),
        null,
        { timeout: TIMEOUT },
      )
      .catch(async (e) => {
        throw new Error(`the agreement chart says "${await page.getAttribute("#chart-agreement", "aria-label")}": ${e.message}`);
      });
    console.log(`     ${await page.getAttribute("#chart-agreement", "aria-label")}`);
  });

  await step("past sixteen lines a chart's colours repeat only with dashes: a run of 21 features", async () => {
    const created = await page.evaluate(async () => {
      const schema = await fetch("/api/config-schema").then((r) => r.json());
      const features = [...new Set(Object.values(schema.feature_set_members).flatMap((m) => m.features))];
      const resp = await fetch("/api/runs", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ name: "e2e many features", config: { population: 4, depth: 1, generations: 1, features, benchmark: { panel: [] } } }),
      });
      return { status: resp.status, body: await resp.json(), n: features.length };
    });
    check(created.status === 201, `creating the run answered ${created.status}: ${JSON.stringify(created.body)}`);
    check(created.n > 16, `only ${created.n} features known: not enough lines to test this`);
    await page.goto(`${base}/#/runs/${created.body.id}`);
    await page.locator(".title-line .badge", { hasText: "finished" }).waitFor();
    await page.locator("#chart-weights .uplot").waitFor();
    // uPlot resolves each series' stroke when it first draws, a frame after the chart is made:
    // on a loaded machine the chart can be there before that.
    await page.waitForFunction(() => document.querySelector("#chart-weights")?.uplot?.series.slice(1).every((s) => typeof s._stroke === "string"));
    const lines = await page.evaluate(() => document.querySelector("#chart-weights").uplot.series.slice(1).map((s) => ({ stroke: String(s._stroke ?? s.stroke), dash: JSON.stringify(s.dash || []) })));
    check(lines.length === created.n, `${lines.length} weight lines for ${created.n} features`);
    const looks = lines.map((l) => `${l.stroke} ${l.dash}`);
    check(new Set(looks).size === lines.length, `two weight lines look alike: ${looks.join(" | ")}`);
    check(lines.slice(0, 16).every((l) => l.dash === "[]"), "one of the first sixteen lines is dashed");
    check(lines.slice(16).every((l) => l.dash !== "[]"), `a line past sixteen is solid: ${looks.slice(16).join(" | ")}`);
  });

  await step("two runs compared: curves overlaid, config differences listed", async () => {
    await page.goto(`${base}/#/runs`);
    for (const name of ["e2e tiny run", "e2e renamed"]) {
      const box = page.locator("table.runs tbody tr", { hasText: name }).first().locator("input.pick");
      // Each row's box is named after its run, not "compare this run" on every row.
      check((await box.getAttribute("aria-label")) === `compare ${name}`, `the box of ${name} reads "${await box.getAttribute("aria-label")}"`);
      await box.check();
    }
    await page.click("#runs-compare");
    await page.waitForURL(/#\/compare\?ids=/);
    await page.locator("#compare-panel .uplot").waitFor();
    await page.locator("#compare-best .uplot").waitFor();
    const series = await page.evaluate(() => document.querySelector("#compare-best").uplot.series.slice(1).map((s) => s.label));
    check(series.includes("e2e tiny run") && series.includes("e2e renamed"), `compared series: ${series.join(", ")}`);
    const diffKeys = await page.locator("#compare-diff tbody th").allTextContents();
    for (const key of ["population", "depth", "generations"]) check(diffKeys.includes(key), `${key} is not listed as differing: ${diffKeys.join(", ")}`);
    check(!diffKeys.includes("rules"), "a setting both runs share is listed as differing");
    const [download] = await Promise.all([page.waitForEvent("download"), page.click("#compare-best-data-csv")]);
    const header = readFileSync(await download.path(), "utf8").split("\n")[0];
    check(header === "generation,e2e tiny run,e2e renamed" || header === "generation,e2e renamed,e2e tiny run", `CSV header: ${header}`);
    // The JSON names its series by run id (names may repeat), each with its run's name.
    const ids = decodeURIComponent(page.url().split("ids=")[1] || "").split(",");
    const [jsonDownload] = await Promise.all([page.waitForEvent("download"), page.click("#compare-best-data-json")]);
    const doc = JSON.parse(readFileSync(await jsonDownload.path(), "utf8"));
    check(JSON.stringify(Object.keys(doc.runs || {}).sort()) === JSON.stringify([...ids].sort()), `compare JSON keys: ${Object.keys(doc.runs || {})} for ${ids}`);
    const names = Object.values(doc.runs).map((r) => r.name).sort();
    check(JSON.stringify(names) === JSON.stringify(["e2e renamed", "e2e tiny run"]), `names in the compare JSON: ${names}`);
    check(Object.values(doc.runs).every((r) => Array.isArray(r.points) && r.points.length > 0 && "generation" in r.points[0]), "no points in the compare JSON");
    // A link to a run that is not there says so.
    await page.goto(`${base}/#/compare?ids=${ids[0]},00000000-0000-0000-0000-000000000000`);
    await page.locator("#compare-missing", { hasText: "00000000-0000-0000-0000-000000000000" }).waitFor();
  });

  await step("play a move and see the agent answer", async () => {
    await page.click('#nav a[data-route="play"]');
    await page.locator("#board .pit").first().waitFor();
    check((await page.locator("#board .pit").count()) === 12, "the board does not have 2 x 6 pits");
    // The exported run is in the catalogue as an opponent.
    const exportOptions = await page.locator('#play-agent optgroup[label="Exported runs"] option').count();
    check(exportOptions >= 1, "the finished run's weights are not offered as an agent");
    // The route names the window and takes the focus to its heading; a skip link leads there.
    await page.waitForFunction(() => document.title === "Play · kalah-tuner" && document.activeElement?.tagName === "H1", null, { timeout: 10000 })
      .catch(async () => check(false, `after the route change the title is "${await page.title()}" and the focus on ${await page.evaluate(() => document.activeElement?.tagName)}`));
    check((await page.locator("a.skip-link").count()) === 1, "no skip link");
    await page.click("#board .pit.south.playable >> nth=0");
    // Our move, then at least one of the agent's (extra turns may give either side more).
    await page.locator("#move-log li.north").first().waitFor();
    // The focus stays on the board, not on <body>, while and after the agent answers.
    await page.waitForFunction(() => !!document.querySelector("#board button.pit.playable"));
    check(await page.evaluate(() => document.querySelector("#board").contains(document.activeElement)), `the focus left the board: ${await page.evaluate(() => document.activeElement?.tagName)}`);
    const log = await page.$$eval("#move-log li", (lis) => lis.map((l) => l.textContent));
    check(log[0].startsWith("South (you) played"), `first log line: ${log[0]}`);
    console.log(`     ${log.join(" | ")}`);
  });

  await step("the board names its pits and stores to a screen reader", async () => {
    check((await page.getAttribute("#board .board", "role")) === "group", "the board's role");
    const store = await page.getAttribute("#board .store.south", "aria-label");
    check(/south store, \d+ seeds?$/.test(store || ""), `store label: ${store}`);
    const pits = await page.$$eval("#board .pit", (els) => els.map((e) => [e.tagName, e.getAttribute("role"), e.getAttribute("aria-label")]));
    check(pits.every(([tag, role, label]) => (tag === "BUTTON" || role === "img") && /pit \d+, \d+ seeds?\b/.test(label || "") && !/\b1 seeds/.test(label || "")), `pits: ${JSON.stringify(pits.slice(0, 3))}`);
  });

  await step("a board of another size is drawn", async () => {
    await page.fill("#play-pits", "4");
    await page.fill("#play-seeds", "3");
    await page.dispatchEvent("#play-pits", "change");
    await page.waitForFunction(() => document.querySelectorAll("#board .pit").length === 8);
    check((await page.textContent("#board .store.south .count")) === "0", "south store is not empty at the start");
    // The largest board fits its card at 1280 px, not clipped.
    await page.fill("#play-pits", "12");
    await page.dispatchEvent("#play-pits", "change");
    await page.waitForFunction(() => document.querySelectorAll("#board .pit").length === 24);
    const fit = await page.evaluate(() => {
      const board = document.querySelector("#board .board").getBoundingClientRect();
      const card = document.querySelector("#board").closest(".card");
      const box = card.getBoundingClientRect();
      return { board: [board.left, board.right], card: [box.left, box.right], scroll: card.scrollWidth - card.clientWidth };
    });
    check(fit.board[0] >= fit.card[0] && fit.board[1] <= fit.card[1] && fit.scroll <= 1, `the 12-pit board does not fit its card: ${JSON.stringify(fit)}`);
    await page.fill("#play-pits", "4");
    await page.dispatchEvent("#play-pits", "change");
    await page.waitForFunction(() => document.querySelectorAll("#board .pit").length === 8);
  });

  await step("watch two agents play to the end", async () => {
    await page.selectOption("#play-mode", "watch");
    await page.fill("#play-speed", "0");
    await page.locator("#game-result").waitFor();
    const result = await page.textContent("#game-result");
    check(/wins|Draw/.test(result), `result: ${result}`);
    const lastMove = (await page.textContent("#last-move")) || "";
    check(!/null|undefined/.test(lastMove), `the line under the board reads "${lastMove}"`);
    check(/game over/.test(lastMove), `the last move does not say the game is over: "${lastMove}"`);
  });

  await step("watching two agents goes on after failed requests", async () => {
    let failures = 0;
    const handler = (route) => (failures++ < 2 ? route.abort() : route.continue());
    await page.route("**/api/move", handler);
    await page.fill("#play-speed", "200");
    await page.click("#new-game");
    await page.locator("#flash.show.error", { hasText: "trying again" }).waitFor();
    // The same move is asked for again, and the game carries on without a click.
    await page.waitForFunction(() => document.querySelectorAll("#move-log li").length >= 3, null, { timeout: 30000 });
    await page.unroute("**/api/move", handler);
    check(failures >= 2, `only ${failures} requests failed`);
    check(!(await page.locator("#flash.show.error").count()), "the error banner stays after the moves came back");
    await page.fill("#play-speed", "0");
  });

  await step("the whole move log can be read at 1440 px wide", async () => {
    await page.setViewportSize({ width: 1440, height: 900 });
    // Two even searchers on the full board play long games (greedy against minimax, or any
    // game on the 4-pit board of an earlier step, can end in 15 moves).
    await page.fill("#play-pits", "6");
    await page.fill("#play-seeds", "4");
    await page.locator("#play-seeds").dispatchEvent("change");
    for (const side of ["south", "north"]) {
      await page.selectOption(`#watch-${side}`, "custom");
      await page.fill(`#watch-${side}-custom`, "minimax:3");
    }
    // Games until one is long enough (each seed gives another game), each to its end.
    let moves = 0;
    for (let seed = 1; seed <= 8 && moves <= 30; seed++) {
      await page.fill("#play-seed", String(seed));
      await page.click("#new-game");
      // The game's end: a result, and a log that stops growing.
      let still = 0;
      for (const deadline = Date.now() + 30000; still < 5 && Date.now() < deadline; ) {
        await page.waitForTimeout(200);
        const now = await page.locator("#move-log li").count();
        const ended = (await page.locator("#game-result").count()) > 0;
        still = ended && now === moves ? still + 1 : 0;
        moves = now;
      }
    }
    console.log(`     a game of ${moves} moves`);
    check(moves > 30, `only ${moves} moves in the log: the games were too short to test this`);
    // Every entry lies inside the log's box horizontally (none in a clipped column), and the
    // last one can be scrolled into view.
    const outside = await page.evaluate(() => {
      const log = document.querySelector("#move-log");
      const box = log.getBoundingClientRect();
      return [...log.querySelectorAll("li")].filter((li) => {
        const r = li.getBoundingClientRect();
        return r.left < box.left - 1 || r.right > box.right + 1;
      }).length;
    });
    check(outside === 0, `${outside} of ${moves} moves lie outside the log's box`);
    await page.locator("#move-log li").last().scrollIntoViewIfNeeded();
    check(await page.locator("#move-log li").last().isVisible(), "the last move cannot be shown");
    await page.setViewportSize({ width: 1280, height: 860 });
  });

  await step("the pie rule: playing North, the human swaps after the agent's opening", async () => {
    await page.selectOption("#play-mode", "human");
    await page.selectOption("#play-side", "north");
    await page.selectOption("#play-agent", "custom");
    await page.fill("#play-agent-custom", "greedy");
    // Ticking the box starts a new game. The agent opens as South; then, and only then, the
    // swap is offered.
    await page.check("#play-pie");
    await page.waitForFunction(
      () => !document.querySelector("#swap-button").hidden && document.querySelectorAll("#move-log li").length === 1,
    );
    const opening = await page.$$eval("#move-log li", (lis) => lis.map((l) => l.textContent));
    check(opening.length === 1 && opening[0].startsWith("South (greedy) played"), `before the swap: ${opening.join(" | ")}`);
    check(!/extra turn/.test(opening[0]), `the opening earned an extra turn: ${opening[0]}`);
    await page.click("#swap-button");
    // After the swap the first mover (South, the agent) moves again from what was North's side.
    await page.locator("#move-log li >> nth=2").waitFor();
    const log = await page.$$eval("#move-log li", (lis) => lis.map((l) => l.textContent));
    check(/^North \(you\) swapped/.test(log[1]), `the swap's log line: ${log[1]}`);
    check(log[2].startsWith("South (greedy) played"), `after the swap: ${log[2]}`);
    check(!log.some((l) => /\b1 seeds\b/.test(l)), `"1 seeds" in the log: ${log.join(" | ")}`);
    check(await page.locator("#swap-button").isHidden(), "the swap is still offered after it was played");
    console.log(`     ${log.slice(0, 3).join(" | ")}`);
    await page.uncheck("#play-pie");
  });

  await step("a tournament fills its cross-table", async () => {
    await page.click('#nav a[data-route="tournament"]');
    await page.locator("#tour-start").waitFor();
    // Only two quick agents.
    for (const box of await page.locator(".check-grid input").all()) await box.setChecked(false);
    await page.locator("label.check", { hasText: /^\s*random/ }).locator("input").check();
    await page.locator("label.check", { hasText: /^\s*greedy/ }).locator("input").check();
    await page.fill("#tour-games", "4");
    await page.click("#tour-start");
    await page.locator("#cross-table tbody tr").nth(1).waitFor();
    const cells = await page.locator("#cross-table td.score").count();
    check(cells === 2, `cross-table has ${cells} score cells, expected 2`);
  });

  await step("tournament players have short names, and a failed start names the agent and keeps the table", async () => {
    // A filter narrows the long list of agents (ticked ones stay); "(export)" reads as a word.
    await page.fill("#tour-filter", "e2e tiny");
    const shownBoxes = await page.locator(".check-grid label.check:visible").allTextContents();
    check(shownBoxes.length >= 3 && shownBoxes.some((t) => /e2e tiny run/.test(t)), `filtered agents: ${shownBoxes.join(" | ")}`);
    check(shownBoxes.every((t) => /e2e tiny/.test(t) || /^\s*(random|greedy)\s*$/.test(t)), `the filter shows others: ${shownBoxes.join(" | ")}`);
    const exportTag = await page.locator("label.check", { hasText: "e2e tiny run" }).first().locator(".muted").boundingBox();
    check(exportTag && exportTag.height < 30, `"(export)" wraps: ${JSON.stringify(exportTag)}`);
    await page.fill("#tour-filter", "");
    // An exported run is named by its run's name, not its 300-character spec; a custom line
    // may name its agent.
    await page.locator("label.check", { hasText: "e2e tiny run" }).first().locator("input").check();
    await page.fill("#tour-custom", "deep = minimax:3");
    await page.fill("#tour-games", "2");
    await page.click("#tour-start");
    await page.locator("#cross-table tbody tr").nth(3).waitFor();
    await page.locator("#tour-status", { hasText: "Done" }).waitFor();
    const headers = await page.locator("#cross-table thead th").allTextContents();
    check(headers.includes("e2e tiny run") && headers.includes("deep"), `headers: ${headers.join(" | ")}`);
    check(headers.every((t) => t.length <= 30), `a header is too long: ${headers.join(" | ")}`);
    // Score and Elo come before the pair cells, so they show without scrolling.
    check(headers[1] === "score [95%]" && headers[2] === "Elo", `header order: ${headers.join(" | ")}`);
    // A bad agent: the message names it once, by name, and the last table stays.
    await page.fill("#tour-custom", "deep = minimax:3\nbroken = minimax:99");
    await page.click("#tour-start");
    const flash = page.locator("#flash", { hasText: "broken" });
    await flash.waitFor();
    const message = (await flash.textContent()) || "";
    check(!/agents\[\d+\]/.test(message), `the message names the agent by index: ${message}`);
    check((message.match(/depth/g) || []).length <= 2 && !/(\S+: )\1/.test(message), `the message repeats itself: ${message}`);
    check((await page.locator("#cross-table tbody tr").count()) === 4, "the last table was wiped");
    check(!/Done/.test((await page.textContent("#tour-status")) || ""), "the status still says Done after a failed start");
    // An unnamed agent is named by its spec once, not twice.
    await page.fill("#tour-custom", "bogus:1");
    await page.click("#tour-start");
    const bogus = page.locator("#flash", { hasText: "bogus" });
    await bogus.waitFor();
    const bogusText = (await bogus.textContent()) || "";
    check((bogusText.match(/bogus:1/g) || []).length === 1, `the message repeats the spec: ${bogusText}`);
    // An odd number of games is refused, not rounded.
    await page.fill("#tour-custom", "");
    await page.fill("#tour-games", "5");
    await page.click("#tour-start");
    await page.locator("#flash", { hasText: "even" }).waitFor();
  });

  await step("a stored tournament reopens from the list of past tournaments, after a server restart too", async () => {
    await page.goto(`${base}/#/runs`);
    await page.click('#nav a[data-route="tournament"]');
    const first = page.locator("#tour-past li a").first();
    await first.waitFor();
    check(/e2e tiny run/.test((await first.textContent()) || ""), `the newest past tournament: ${await first.textContent()}`);
    await first.click();
    await page.locator("#cross-table tbody tr").nth(3).waitFor();
    const headers = await page.locator("#cross-table thead th").allTextContents();
    check(headers.includes("e2e tiny run") && headers.includes("deep"), `reopened headers: ${headers.join(" | ")}`);
    await page.locator("#tour-status", { hasText: "Done" }).waitFor();
    // After the server is killed and started again, the same table opens from the same link.
    const link = await first.getAttribute("href");
    await restartServer();
    await page.goto(`${base}/${link}`);
    await page.locator("#cross-table tbody tr").nth(3).waitFor();
    const again = await page.locator("#cross-table thead th").allTextContents();
    check(JSON.stringify(again) === JSON.stringify(headers), `after the restart: ${again.join(" | ")}`);
    check(/e2e tiny run/.test((await page.locator("#tour-past li a").first().textContent()) || ""), "the list lost the tournament");
  });

  await step("a long tournament is cancelled from its page", async () => {
    await page.goto(`${base}/#/tournament`);
    await page.locator("#tour-start").waitFor();
    for (const box of await page.locator(".check-grid input").all()) await box.setChecked(false);
    // Some 100 s of games: only a cancel ends it within the step.
    await page.fill("#tour-custom", "mcts:20000\nwide = mcts:20000:1.0");
    await page.fill("#tour-games", "100");
    await page.click("#tour-start");
    await page.locator("#tour-cancel:not([hidden])").waitFor();
    // Listed while it runs; leaving and coming back keeps its progress and its Cancel.
    await page.locator("#tour-past li", { hasText: "running" }).first().waitFor({ timeout: 15000 });
    await page.click('#nav a[data-route="runs"]');
    await page.locator("h1", { hasText: "Runs" }).waitFor();
    await page.click('#nav a[data-route="tournament"]');
    await page.locator("#tour-cancel:not([hidden])").waitFor({ timeout: 15000 });
    await page.locator("#tour-status", { hasText: "Running" }).waitFor();
    check(await page.locator("#tour-result").evaluate((el) => el.closest("section").querySelector(".bar.big:not([hidden])") != null), "no progress bar after coming back");
    await page.click("#tour-cancel");
    await page.locator("#tour-status", { hasText: "Cancelled" }).waitFor({ timeout: 15000 });
    check(await page.locator("#tour-cancel").isHidden(), "the Cancel button stays after the tournament ended");
    // The list of past tournaments says so too.
    await page.locator("#tour-past li", { hasText: "cancelled" }).first().waitFor({ timeout: 15000 });
    // An unknown id says so, instead of loading forever.
    await page.goto(`${base}/#/tournament?id=nope`);
    await page.locator("#tour-status", { hasText: "Not found" }).waitFor({ timeout: 15000 });
  });

  await step("a 200-character name without spaces keeps the runs table and the run page within 1280 px", async () => {
    const long = "x".repeat(100) + "y".repeat(100);
    const run = await page.evaluate(async (name) => {
      const resp = await fetch("/api/runs", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ name, config: { population: 4, depth: 1, generations: 1 } }) });
      return resp.json();
    }, long);
    check(run.id, `creating the run: ${JSON.stringify(run)}`);
    await page.goto(`${base}/#/runs`);
    const link = page.locator(`table.runs tbody tr[data-id="${run.id}"] a.run-name`);
    await link.waitFor();
    check((await link.getAttribute("title")) === long, "the whole name is not in the link's title");
    const widths = await page.evaluate(() => ({ page: document.documentElement.scrollWidth, view: window.innerWidth, table: document.querySelector("table.runs").getBoundingClientRect().right }));
    check(widths.page <= widths.view && widths.table <= widths.view, `the runs page is ${widths.page} px wide (table to ${widths.table}) at ${widths.view} px`);
    const actions = await page.locator(`table.runs tbody tr[data-id="${run.id}"] td.actions`).boundingBox();
    check(actions && actions.x + actions.width <= widths.view, "the row's actions leave the screen");
    await page.goto(`${base}/#/runs/${run.id}`);
    await page.locator("h1", { hasText: "xxxx" }).waitFor();
    const title = await page.evaluate(() => {
      const h1 = document.querySelector(".title-line h1");
      return { right: h1.getBoundingClientRect().right, title: h1.title, page: document.documentElement.scrollWidth, view: window.innerWidth };
    });
    check(title.right <= title.view && title.page <= title.view, `the run page's title reaches ${title.right} px, the page ${title.page} px, at ${title.view} px`);
    check(title.title === long, "the whole name is not in the title's tooltip");
  });

  await step("twenty run pages of unfinished runs in one browser share one event stream; the last loads and Cancel works", async () => {
    const N = 20;
    // Unnamed, created within a second: their short ids must differ all the same.
    const runs = await page.evaluate(async (n) => {
      const out = [];
      for (let i = 0; i < n; i++) {
        const resp = await fetch("/api/runs", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ config: { population: 8, depth: 3, generations: 10000, fitness: { games_per_pair: 20 } } }) });
        out.push(await resp.json());
      }
      return out;
    }, N);
    check(runs.every((r) => r.id), `creating the runs: ${JSON.stringify(runs[0])}`);
    const other = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    other.setDefaultTimeout(TIMEOUT);
    let streams = 0;
    other.on("request", (req) => {
      if (/\/api\/(events|runs\/[^/]+\/events)(\?|$)/.test(req.url())) streams++;
    });
    const pages = [];
    try {
      for (const r of runs) {
        const p = await other.newPage();
        p.on("pageerror", (e) => pageErrors.push(String(e && e.stack ? e.stack : e)));
        await p.goto(`${base}/#/runs/${r.id}`);
        await p.locator(".title-line h1", { hasText: /^Run [0-9a-f]{8}$/ }).waitFor();
        pages.push(p);
      }
      // Every page is live, through one stream for the whole browser.
      for (const p of pages) await p.locator(".live-dot").waitFor({ state: "visible" });
      check(streams === 1, `${streams} event streams for ${N} pages`);
      const titles = await Promise.all(pages.map((p) => p.textContent(".title-line h1")));
      check(new Set(titles).size === N, `short ids repeat among runs created together: ${titles.join(", ")}`);
      // Cancel on the last page answers, and the page says so.
      const last = pages[N - 1];
      await last.click("#run-cancel");
      await last.locator(".title-line .badge", { hasText: "cancelled" }).waitFor({ timeout: 15000 });
      check(!/Finished/.test((await last.textContent("dl.stats")) || ""), "a cancelled run shows a Finished time");
      // A run cancelled elsewhere shows as such on its page, pushed through the shared stream.
      await last.evaluate((id) => fetch(`/api/runs/${id}/cancel`, { method: "POST", headers: { "Content-Type": "application/json" }, body: "{}" }), runs[0].id);
      await pages[0].locator(".title-line .badge", { hasText: "cancelled" }).waitFor({ timeout: 15000 });
      check(await pages[0].locator(".live-dot").isHidden(), "the live dot stays on a cancelled run");
      // The tab holding the stream closes: another takes over.
      const leaders = await Promise.all(pages.map((p) => p.evaluate(() => import(new URL("js/live.js", document.baseURI).href).then((m) => m.isLeader()))));
      check(leaders.filter(Boolean).length === 1, `${leaders.filter(Boolean).length} tabs hold the stream`);
      const k = leaders.indexOf(true);
      await pages[k].close();
      pages.splice(k, 1);
      runs.splice(k, 1);
      const j = pages.length - 2;
      await pages[0].evaluate((id) => fetch(`/api/runs/${id}/cancel`, { method: "POST", headers: { "Content-Type": "application/json" }, body: "{}" }), runs[j].id);
      await pages[j].locator(".title-line .badge", { hasText: "cancelled" }).waitFor({ timeout: 20000 });
      check(streams === 2, `${streams} event streams after the holder closed (expected 2)`);
      // A run deleted elsewhere stops saying it runs.
      const d = pages.length - 3;
      await pages[0].evaluate((id) => fetch(`/api/runs/${id}`, { method: "DELETE" }), runs[d].id);
      await pages[d].locator("#run-deleted").waitFor({ state: "visible", timeout: 20000 });
      await pages[d].locator(".title-line .badge", { hasText: "deleted" }).waitFor();
      check(await pages[d].locator(".live-dot").isHidden(), "the live dot stays on a deleted run");
      check(await pages[d].locator("#run-cancel").isHidden(), "Cancel is offered for a deleted run");

      // Without the Web Locks API (a page over plain http from another machine), a lease in
      // localStorage elects the tab that holds the one stream.
      const plain = await browser.newContext({ viewport: { width: 1280, height: 860 } });
      plain.setDefaultTimeout(TIMEOUT);
      await plain.addInitScript(() => delete Navigator.prototype.locks);
      let plainStreams = 0;
      plain.on("request", (req) => {
        if (/\/api\/(events|runs\/[^/]+\/events)(\?|$)/.test(req.url())) plainStreams++;
      });
      try {
        const watched = runs.slice(2, 6);
        const tabs = [];
        for (const r of watched) {
          const p = await plain.newPage();
          p.on("pageerror", (e) => pageErrors.push(String(e && e.stack ? e.stack : e)));
          await p.goto(`${base}/#/runs/${r.id}`);
          await p.locator(".live-dot").waitFor({ state: "visible" });
          tabs.push(p);
        }
        check(await tabs[0].evaluate(() => !navigator.locks), "the Web Locks API is still there");
        check(plainStreams === 1, `${plainStreams} event streams for ${tabs.length} pages without Web Locks`);
        const holders = await Promise.all(tabs.map((p) => p.evaluate(() => import(new URL("js/live.js", document.baseURI).href).then((m) => m.isLeader()))));
        check(holders.filter(Boolean).length === 1, `${holders.filter(Boolean).length} tabs hold the stream without Web Locks`);
        const h = holders.indexOf(true);
        await tabs[h].close({ runBeforeUnload: true });
        tabs.splice(h, 1);
        watched.splice(h, 1);
        await tabs[0].evaluate((id) => fetch(`/api/runs/${id}/cancel`, { method: "POST", headers: { "Content-Type": "application/json" }, body: "{}" }), watched[1].id);
        await tabs[1].locator(".title-line .badge", { hasText: "cancelled" }).waitFor({ timeout: 20000 });
        // The page may show the cancellation by its own poll (every 2 s while no stream is
        // open) before the election ends: a resign message sent while the holder unloads can be
        // lost, and then the others find the lease gone only at their next tick (LEASE_MS).
        for (const until = Date.now() + 10000; plainStreams < 2 && Date.now() < until; ) {
          await new Promise((r) => setTimeout(r, 100));
        }
        check(plainStreams === 2, `${plainStreams} event streams after the holder closed without Web Locks (expected 2)`);
      } finally {
        await plain.close();
      }
    } finally {
      await page.evaluate(async (ids) => {
        for (const id of ids) await fetch(`/api/runs/${id}/cancel`, { method: "POST", headers: { "Content-Type": "application/json" }, body: "{}" }).catch(() => {});
      }, runs.map((r) => r.id));
      await other.close();
    }
  });

  await step("settings say whether the server needs a token, and the preset hint lists every preset", async () => {
    await page.goto(`${base}/#/settings`);
    await page.locator("#token-need", { hasText: "without a token" }).waitFor();
    await page.goto(`${base}/#/new`);
    await page.locator("#f-preset").waitFor();
    const hint = (await page.locator('.field[data-key="preset"] .range').textContent()) || "";
    check(/mankalah/.test(hint), `the preset hint: ${hint}`);
    check(await page.locator("#token-note").isHidden(), "a token note on a server without a token");
  });

  await step("the pages fit a phone screen", async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    for (const hash of ["#/runs", runUrl.slice(runUrl.indexOf("#")), "#/play", "#/new"]) {
      await page.goto(`${base}/${hash}`);
      await page.locator("main .card").first().waitFor();
      await page.waitForTimeout(300);
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      check(overflow <= 1, `${hash} is ${overflow}px wider than the phone screen`);
    }
  });

  check(pageErrors.length === 0, `uncaught errors in the page:\n${pageErrors.join("\n")}`);
} catch (e) {
  exitCode = 1;
  if (pageErrors.length) console.log(`page errors:\n${pageErrors.join("\n")}`);
} finally {
  await browser.close();
}
console.log(`dashboard-e2e: ${passed} passed, ${failed} failed`);
process.exit(exitCode);
