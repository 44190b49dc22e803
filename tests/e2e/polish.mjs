// What a user meets on the way: long names, notes and tags that must not widen any page, a
// cancelled run's badge that must be readable, no console error on loading any page, and the
// small texts that were wrong (a "null" under tournaments, the Texel form opening invalid, the
// SPRT page's claim that tests are forgotten, the tag limit said only on Save).
//
//   node tests/e2e/polish.mjs <base-url>

import { api, axeViolations, base, check, setTheme, step, withBrowser } from "./lib.mjs";

const LONG = "R".repeat(200);
const TAG = "t".repeat(40);
const NOTES = "N".repeat(400);
const tiny = (seed) => ({ population: 4, depth: 1, generations: 1, seed, fitness: { games_per_pair: 2 } });

async function waitFor(page, path, done, what) {
  for (let i = 0; i < 600; i++) {
    const r = await api(page, "GET", path);
    if (r.status === 200 && done(r.body)) return r.body;
    await page.waitForTimeout(200);
  }
  throw new Error(`${what}: never reached`);
}

/** Loads `hash` afresh and waits for the page's main content. */
async function open(page, hash, ready) {
  await page.goto(`${base}/${hash}`);
  await page.locator(ready).first().waitFor();
  // Late renders (charts, tables filled by a second request) settle.
  await page.waitForTimeout(700);
}

async function pageWidth(page) {
  return page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, window: window.innerWidth }));
}

await withBrowser("polish-e2e", async (page, context) => {
  const consoleErrors = [];
  // The page of a test that does not exist asks for it and is answered 404, as it should be.
  let askingForNothing = false;
  page.on("console", (msg) => {
    if (msg.type() === "error" && !askingForNothing) consoleErrors.push(`${page.url()}: ${msg.text()}`);
  });
  await page.goto(`${base}/#/runs`);

  const ids = [];
  let cancelled;
  let tournament;
  await step("set up: two finished runs with 200-character names, tags and notes; a cancelled run; a tournament", async () => {
    for (const seed of [1, 2]) {
      const r = await api(page, "POST", "/api/runs", { name: `${LONG}${seed}`.slice(0, 200), config: tiny(seed) });
      check(r.status === 201, `creating a run: ${r.status} ${r.text}`);
      ids.push(r.body.id);
    }
    for (const id of ids) {
      await waitFor(page, `/api/runs/${id}`, (r) => r.status === "finished", `run ${id} finished`);
      const r = await api(page, "PATCH", `/api/runs/${id}`, { notes: NOTES, tags: [TAG, `${TAG.slice(0, 39)}u`] });
      check(r.status === 200, `describing a run: ${r.status} ${r.text}`);
    }
    const c = await api(page, "POST", "/api/runs", { name: "to be cancelled", config: { ...tiny(3), generations: 200, depth: 4 } });
    check(c.status === 201, `creating a run: ${c.text}`);
    cancelled = c.body.id;
    const x = await api(page, "POST", `/api/runs/${cancelled}/cancel`, {});
    check(x.status === 200, `cancelling: ${x.status} ${x.text}`);
    const t = await api(page, "POST", "/api/tournaments", { agents: ["random", "greedy"], games: 2, seed: 1 });
    check(t.status === 202, `starting a tournament: ${t.status} ${t.text}`);
    tournament = t.body.id;
    await waitFor(page, `/api/tournaments/${tournament}`, (t) => t.status === "finished", "the tournament finished");
  });

  const pages = () => [
    ["#/runs", "table.runs"],
    [`#/runs/${ids[0]}`, "#run-notes"],
    [`#/compare?ids=${ids.join(",")}`, "#compare-diff"],
    [`#/tournament?id=${tournament}`, "#cross-table"],
    ["#/tournament", "#tour-filter"],
    ["#/new", "#f-population"],
    ["#/new?tuner=texel", ".estimate"],
    ["#/settings", "#token"],
    ["#/play", "#view"],
    ["#/sprt", "#sprt-a"],
    ["#/workers", "#view"],
  ];

  for (const width of [1280, 375]) {
    await step(`no page is wider than a ${width} px window with 200-character names, tags and notes`, async () => {
      await page.setViewportSize({ width, height: 800 });
      const wide = [];
      for (const [hash, ready] of pages()) {
        await open(page, hash, ready);
        const w = await pageWidth(page);
        if (w.scroll > w.window) wide.push(`${hash}: ${w.scroll} px in ${w.window}`);
      }
      check(!wide.length, `pages wider than the window:\n  ${wide.join("\n  ")}`);
    });
  }
  await step("on a phone, tick boxes are 24 px targets and the top bar does not hold the screen", async () => {
    await page.setViewportSize({ width: 375, height: 800 });
    const small = [];
    for (const [hash, ready] of [["#/runs", "table.runs"], [`#/runs/${ids[0]}`, "#run-notes"]]) {
      await open(page, hash, ready);
      const sizes = await page.evaluate(() =>
        [...document.querySelectorAll('input[type="checkbox"]')]
          .filter((el) => el.offsetParent !== null)
          .map((el) => ({ id: el.id || el.closest("label")?.textContent?.trim().slice(0, 30) || "?", w: el.getBoundingClientRect().width, h: el.getBoundingClientRect().height })),
      );
      for (const b of sizes) if (b.w < 24 || b.h < 24) small.push(`${hash} ${b.id}: ${b.w}x${b.h}`);
    }
    check(!small.length, `tick boxes under 24 px:\n  ${small.join("\n  ")}`);
    await page.evaluate(() => window.scrollTo(0, 600));
    const held = await page.evaluate(() => {
      const bar = document.querySelector(".topbar").getBoundingClientRect();
      return Math.max(0, Math.min(bar.bottom, window.innerHeight) - Math.max(bar.top, 0));
    });
    check(held <= 80, `the top bar keeps ${held} px of the screen after scrolling`);
  });
  await page.setViewportSize({ width: 1280, height: 860 });

  await step("the tournament agent list shows a long run name in at most two lines", async () => {
    await open(page, "#/tournament", "#tour-filter");
    const label = page.locator("label.check", { hasText: "RRRRRRRRRR" }).first();
    await label.waitFor();
    const lines = await label.locator(".agent-name").evaluate((el) => Math.round(el.getBoundingClientRect().height / parseFloat(getComputedStyle(el).lineHeight || "16")));
    check(lines <= 2, `the run name takes ${lines} lines`);
    check(((await label.getAttribute("title")) || "").includes("RRRRRRRRRR"), "the whole name is not in the title");
  });

  await step("a tournament without SPRT shows no \"null\"", async () => {
    await open(page, `#/tournament?id=${tournament}`, "#cross-table");
    const text = await page.locator("#view").innerText();
    check(!/\bnull\b/.test(text), `"null" on the page: ${text.slice(0, 400)}`);
  });

  await step("the Texel form opens valid, with an estimate", async () => {
    await open(page, "#/new?tuner=texel", ".estimate");
    await page.locator(".estimate", { hasText: /processor time/ }).waitFor({ timeout: 20000 });
    const text = await page.locator(".estimate").innerText();
    check(!/not a valid run|: :/.test(text), `the estimate: ${text}`);
    check((await page.inputValue("#f-source")).trim() !== "", "the source field is empty");
  });

  await step("the pie rule's default reads the same on every tuner's form", async () => {
    for (const tuner of ["ga", "td", "texel"]) {
      await open(page, `#/new?tuner=${tuner}`, "#f-pie");
      const text = await page.locator('div.field[data-key="pie"] .default').innerText();
      check(/default off/.test(text), `${tuner}: the pie field says "${text}"`);
    }
  });

  await step("an unknown SPRT test is not said to be forgotten on restart", async () => {
    askingForNothing = true;
    await open(page, "#/sprt?id=00000000-0000-4000-8000-000000000000", "h1");
    askingForNothing = false;
    const text = await page.locator("#view").innerText();
    check(/No such SPRT test/.test(text), `the page: ${text.slice(0, 300)}`);
    check(!/memory|forgets/.test(text), `the page still says tests are forgotten: ${text.slice(0, 300)}`);
  });

  await step("the tag limit is said before Save, and a long tag is named as it is typed", async () => {
    await open(page, `#/runs/${ids[0]}`, "#run-notes");
    await page.click("#run-edit");
    const field = page.locator("#edit-tags");
    check(Number(await field.getAttribute("maxlength")) > 0, "the tags field has no maxlength");
    check(/40 characters/.test(await page.locator("#edit-tags-hint").innerText()), "no hint of the 40-character limit");
    await field.fill(`fine, ${"x".repeat(41)}`);
    await page.locator("#edit-tags-hint", { hasText: "41 characters" }).waitFor();
    check(!(await field.evaluate((el) => el.checkValidity())), "a 41-character tag passes the form's check");
  });

  await step("a generation picked while new ones arrive stays shown; the compare page follows a running run", async () => {
    const r = await api(page, "POST", "/api/runs", { name: "fast generations", config: { ...tiny(5), generations: 3000 } });
    check(r.status === 201, `creating a run: ${r.text}`);
    const id = r.body.id;
    await waitFor(page, `/api/runs/${id}`, (run) => run.generations_done >= 5, "five generations");
    await open(page, `#/runs/${id}`, "#population-info");
    await page.locator("#population-info", { hasText: /^Generation \d+:/ }).waitFor();
    for (let i = 0; i < 3; i++) {
      // Just after a generation arrives: the latest population's refresh is pending then.
      const before = await page.inputValue("#pop-gen");
      await page.waitForFunction((b) => document.querySelector("#pop-gen").value !== b, before, { timeout: 20000 });
      await page.fill("#pop-gen", "1");
      await page.keyboard.press("Tab");
      await page.waitForTimeout(2500);
      const info = await page.textContent("#population-info");
      check(/^Generation 1:/.test(info || ""), `try ${i + 1}: the table shows ${info}`);
      check((await page.inputValue("#pop-gen")) === "1", `try ${i + 1}: the box says ${await page.inputValue("#pop-gen")}`);
      check(!(await page.isChecked("#pop-follow")), `try ${i + 1}: still following the latest`);
      await page.check("#pop-follow");
    }
    // The compare page follows it too, and says so.
    await open(page, `#/compare?ids=${ids[0]},${id}`, "#compare-diff");
    await page.locator("#compare-live", { hasText: "Live" }).waitFor();
    const before = await page.locator(".compare-runs li").nth(1).innerText();
    await page.waitForFunction((b) => document.querySelectorAll(".compare-runs li")[1].innerText !== b, before, { timeout: 20000 });
    await api(page, "POST", `/api/runs/${id}/cancel`, {});
    await page.locator("#compare-live", { hasText: "Every compared run has ended" }).waitFor({ timeout: 20000 });
  });

  await step("a slow SPRT test shows its games within the first batch", async () => {
    const r = await api(page, "POST", "/api/sprt-tests", { a: "mcts:2000", b: "mcts:2000:1.0", sprt: "0,10", max_pairs: 200, seed: 3 });
    check(r.status === 202, `starting an SPRT test: ${r.status} ${r.text}`);
    await open(page, `#/sprt?id=${r.body.id}`, "dd[data-stat=Pairs]");
    await page.waitForFunction(() => /^0 of at most 200 \([1-9][\d,]* games played/.test(document.querySelector("dd[data-stat=Pairs]")?.textContent || ""), null, { timeout: 30000 });
    await api(page, "POST", `/api/sprt-tests/${r.body.id}/cancel`, {});
  });

  for (const theme of ["light", "dark"]) {
    await step(`the cancelled badge and the pages with long names pass axe (${theme})`, async () => {
      await open(page, "#/runs", ".runs");
      await setTheme(page, theme);
      const problems = [];
      for (const [hash, ready] of [["#/runs", ".runs"], [`#/runs/${cancelled}`, ".title-line .badge"], [`#/runs/${ids[0]}`, "#run-notes"], [`#/compare?ids=${ids.join(",")}`, "#compare-diff"]]) {
        await open(page, hash, ready);
        for (const v of await axeViolations(page)) problems.push(`${hash}: ${v}`);
      }
      check(!problems.length, problems.join("\n"));
    });
  }

  await step("no page logs a console error on loading", async () => {
    check(!consoleErrors.length, `console errors:\n  ${consoleErrors.join("\n  ")}`);
  });

  await step("the API reference at /api/docs renders with no network", async () => {
    // Anything not asked of this server fails, as on a machine with no network.
    const server = new URL(base).host;
    const offline = (route) => (new URL(route.request().url()).host === server ? route.continue() : route.abort("internetdisconnected"));
    await page.route("**/*", offline);
    const outside = [];
    const watch = (req) => {
      if (new URL(req.url()).host !== server) outside.push(req.url());
    };
    page.on("request", watch);
    await page.goto(`${base}/api/docs`);
    await page.getByText("Create a run (queued for a worker)").first().waitFor({ timeout: 30000 });
    page.off("request", watch);
    await page.unroute("**/*", offline);
    check(!outside.length, `the reference asked the network for ${outside.join(", ")}`);
  });

  // Last: the failed requests of this step log errors of their own.
  await step("the Play page's error banner goes once the server answers again", async () => {
    const away = (route) => route.abort("connectionrefused");
    await page.route("**/api/position/start**", away);
    await page.goto(`${base}/#/play`);
    await page.locator("#flash.show.error", { hasText: "could not be started" }).waitFor({ timeout: 15000 });
    await page.unroute("**/api/position/start**", away);
    await page.locator("#flash.show.error").waitFor({ state: "detached", timeout: 20000 });
  });
  void context;
});
