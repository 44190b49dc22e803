// The ladder in the browser: two finished runs' champions appear on the ladder page with
// ratings and intervals beside the anchors, the rating-over-time chart draws, a run page says
// where its champion stands, a champion is withdrawn from the page, and axe-core finds no
// serious or critical violation on the ladder page in either theme.
//
//   node tests/e2e/ladder.mjs <base-url>   (tests/server/dashboard.rs starts the server with
//                                           --ladder-share 1 --ladder-depth 1)

import { api, axeViolations, base, check, setTheme, step, withBrowser } from "./lib.mjs";

await withBrowser("ladder-e2e", async (page) => {
  const ids = [];
  await step("two GA runs finish", async () => {
    await page.goto(`${base}/#/runs`);
    for (const seed of [1, 2]) {
      const made = await api(page, "POST", "/api/runs", { name: `ladder ${seed}`, config: { seed, population: 4, generations: 2, depth: 1 } });
      check(made.status === 201, `creating a run: ${made.status} ${made.text}`);
      ids.push(made.body.id);
    }
    for (const id of ids) {
      await page.goto(`${base}/#/runs/${id}`);
      await page.locator(".title-line .badge", { hasText: "finished" }).waitFor();
    }
  });

  await step("the ladder page shows both champions rated, with intervals, and the chart", async () => {
    await page.goto(`${base}/#/ladder?board=6,4`);
    for (const id of ids) {
      const row = page.locator(`#ladder-table tr[data-kind="champion"]`, { has: page.locator(`a[href="#/runs/${id}"]`) });
      await row.locator("td.elo", { hasText: "[" }).waitFor();
    }
    const anchors = await page.locator('#ladder-table tr[data-kind="anchor"]').count();
    check(anchors >= 4, `anchors on the ladder: ${anchors}`);
    await page.locator("#ladder-chart .uplot").waitFor();
    const summary = await page.locator("#ladder-summary").textContent();
    check(/depth 1/.test(summary) && /minimax:1/.test(summary), `the summary names the depth and the reference: ${summary}`);
  });

  await step("a run page says where its champion stands", async () => {
    await page.goto(`${base}/#/runs/${ids[0]}`);
    const standing = page.locator("#ladder-standing");
    await standing.locator("a", { hasText: "see the ladder" }).waitFor();
    const text = await standing.textContent();
    check(/Ladder: \d+ of \d+, -?\d+ Elo \[/.test(text), `the standing: ${text}`);
  });

  await step("axe finds no serious violation on the ladder page, light and dark", async () => {
    const found = [];
    for (const theme of ["light", "dark"]) {
      await page.goto(`${base}/#/ladder?board=6,4`);
      await setTheme(page, theme);
      await page.locator("#ladder-chart .uplot").waitFor();
      await page.waitForTimeout(400);
      for (const v of await axeViolations(page)) found.push(`ladder (${theme}): ${v}`);
    }
    check(found.length === 0, `axe-core:\n  ${found.join("\n  ")}`);
  });

  await step("a champion is withdrawn from the page", async () => {
    await page.goto(`${base}/#/ladder?board=6,4`);
    const row = page.locator(`#ladder-table tr[data-kind="champion"]`, { has: page.locator(`a[href="#/runs/${ids[1]}"]`) });
    page.once("dialog", (d) => d.accept());
    await row.locator("button", { hasText: "Withdraw" }).click();
    await page.locator(`#ladder-table tr[data-withdrawn="true"]`, { has: page.locator(`a[href="#/runs/${ids[1]}"]`) }).waitFor();
  });
});
