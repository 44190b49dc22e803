// Issue 34: axe-core finds no serious or critical accessibility violation on any page of the
// dashboard, in the light and the dark theme, at 1280 px and on a 390 px phone.
//
//   node tests/e2e/axe.mjs <base-url>     (tests/server/dashboard.rs starts the server)

import { api, axeViolations, base, check, setTheme, step, withBrowser } from "./lib.mjs";

await withBrowser("axe-e2e", async (page) => {
  const ids = [];
  let tournament = "";
  let sprtTest = "";
  await step("runs of two tuners and a tournament are made, so that every page has content", async () => {
    await page.goto(`${base}/#/runs`);
    for (const body of [
      { name: "axe ga", config: { population: 4, generations: 3, depth: 1, fitness: { games_per_pair: 2 }, benchmark: { panel: ["random"], pairs: 1 } } },
      { name: "axe td", tuner: "td", config: { games: 16, batch: 8, depth: 1, checkpoint_games: 8, play_depth: 1, benchmark: { panel: ["random"], pairs: 1 } } },
    ]) {
      const made = await api(page, "POST", "/api/runs", body);
      check(made.status === 201, `creating ${body.name}: ${made.status} ${made.text}`);
      ids.push(made.body.id);
    }
    const t = await api(page, "POST", "/api/tournaments", { agents: ["random", "greedy"], games: 4 });
    check(t.status === 202, `starting a tournament: ${t.status} ${t.text}`);
    tournament = t.body.id;
    const test = await api(page, "POST", "/api/sprt-tests", { a: "greedy", b: "random", sprt: "0,50" });
    check(test.status === 202, `starting an SPRT test: ${test.status} ${test.text}`);
    sprtTest = test.body.id;
    for (const id of ids) {
      await page.goto(`${base}/#/runs/${id}`);
      await page.locator(".title-line .badge", { hasText: "finished" }).waitFor();
    }
  });

  const pages = () => [
    ["runs", "#/runs", "table.runs tbody tr"],
    ["new run (GA)", "#/new", "#f-population"],
    ["new run (Texel)", "#/new?tuner=texel", "#f-rounds"],
    ["GA run", `#/runs/${ids[0]}`, "#chart-fitness .uplot"],
    ["TD run", `#/runs/${ids[1]}`, "#chart-panel .uplot"],
    ["compare", `#/compare?ids=${ids.join(",")}`, ".uplot"],
    ["play", "#/play", "#board .pit"],
    ["tournament", `#/tournament?id=${tournament}`, "#cross-table td.score"],
    ["SPRT tests", "#/sprt", "#sprt-list table, #sprt-list p.empty"],
    ["SPRT test", `#/sprt?id=${sprtTest}`, "#chart-llr .uplot"],
    // On SQLite no batch worker exists: the page's empty state (workers.mjs judges its
    // table of two PostgreSQL workers).
    ["workers", "#/workers", "#workers-list table, #workers-list p.empty"],
    ["settings", "#/settings", "#token-need"],
    ["unknown page", "#/nowhere", "main h1"],
  ];

  const found = [];
  for (const width of [1280, 390]) {
    for (const theme of ["light", "dark"]) {
      await step(`no serious or critical axe violation on any page, ${theme} theme, ${width} px`, async () => {
        await page.setViewportSize({ width, height: width > 400 ? 860 : 844 });
        // The theme is read when the page loads; hash changes alone do not load it again.
        await setTheme(page, theme);
        for (const [name, hash, ready] of pages()) {
          await page.goto(`${base}/${hash}`);
          await page.locator(ready).first().waitFor();
          check((await page.evaluate(() => document.documentElement.dataset.theme)) === theme, `${name} is not in the ${theme} theme`);
          // Transitions and the first fetches settle before the page is judged.
          await page.waitForTimeout(400);
          for (const v of await axeViolations(page)) found.push(`${name} (${theme}, ${width} px): ${v}`);
        }
        check(found.length === 0, `axe-core:\n  ${found.join("\n  ")}`);
      });
    }
  }
});
