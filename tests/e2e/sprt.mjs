// Issue 34 item 7: SPRT in the dashboard. A test is started from its page, watched live (its
// LLR chart grows between its bounds, the pentanomial counts fill), and ends on its verdict;
// a long one is stopped from its page; a tournament with an SPRT shows each pairing's
// verdict and LLR; a plain match is played from the same page (/api/matches).
//
//   node tests/e2e/sprt.mjs <base-url>     (tests/server/dashboard.rs starts the server)

import { api, base, check, step, withBrowser } from "./lib.mjs";

await withBrowser("sprt-e2e", async (page) => {
  const pointsOnChart = () => page.evaluate(() => document.querySelector("#chart-llr")?.uplot?.data?.[0]?.length ?? 0);
  const llrText = async () => (await page.textContent('[data-stat="LLR"]')) || "";

  await step("an SPRT test started from its page plays live and ends on its verdict", async () => {
    await page.goto(`${base}/#/sprt`);
    await page.click('#nav a[data-route="sprt"]');
    await page.locator("#sprt-a").waitFor();
    await page.fill("#sprt-a", "minimax:3");
    await page.fill("#sprt-b", "random");
    await page.fill("#sprt-elo0", "0");
    await page.fill("#sprt-elo1", "30");
    await page.fill("#sprt-max-pairs", "2000");
    await page.click("#sprt-start");
    await page.waitForURL(/#\/sprt\?id=/);
    await page.locator("#chart-llr .uplot").waitFor();
    // Its page follows it while it plays, and stops following once it is decided.
    await page.locator(".title-line .badge", { hasText: "finished" }).waitFor();
    const verdict = await page.getAttribute("#sprt-verdict", "data-verdict");
    check(verdict === "accept_h1", `minimax:3 against random: ${verdict} (${await page.textContent("#sprt-verdict")})`);
    check(await page.locator("#sprt-cancel").isHidden(), "a decided test still offers Stop");
    const id = decodeURIComponent(page.url().split("id=")[1]);
    const t = await api(page, "GET", `/api/sprt-tests/${id}`);
    check(t.body.report.llr >= t.body.report.upper_bound, `the LLR ${t.body.report.llr} is below the upper bound ${t.body.report.upper_bound}`);
    check(t.body.report.pairs < t.body.max_pairs, "the test played every pair instead of stopping on its verdict");
    check((await pointsOnChart()) === t.body.history.length && t.body.history.length >= 2, `the chart has ${await pointsOnChart()} points, the test ${t.body.history.length}`);
    const counts = await page.$$eval("#sprt-counts tbody td", (tds) => tds.map((td) => Number(td.textContent)));
    check(counts.length === 5 && counts.reduce((a, b) => a + b, 0) === t.body.report.pairs, `pentanomial counts ${counts} for ${t.body.report.pairs} pairs`);
    check(/bounds/.test(await llrText()), `the LLR line: ${await llrText()}`);
  });

  await step("a long SPRT test is watched live, its LLR chart growing, and stopped from its page", async () => {
    await page.goto(`${base}/#/sprt`);
    await page.locator("#sprt-a").waitFor();
    // Two equal players and narrow hypotheses: hundreds of pairs before a verdict.
    await page.fill("#sprt-a", "minimax:4");
    await page.fill("#sprt-b", "minimax:4");
    await page.fill("#sprt-elo0", "0");
    await page.fill("#sprt-elo1", "2");
    await page.fill("#sprt-max-pairs", "2000");
    await page.click("#sprt-start");
    await page.waitForURL(/#\/sprt\?id=/);
    await page.locator(".title-line .badge", { hasText: "running" }).waitFor();
    const first = await pointsOnChart();
    await page.waitForFunction((n) => (document.querySelector("#chart-llr")?.uplot?.data?.[0]?.length ?? 0) > n + 1, first);
    check(/Playing/.test((await page.textContent("#sprt-verdict")) || ""), "the running test does not say it plays");
    await page.click("#sprt-cancel");
    await page.locator(".title-line .badge", { hasText: "cancelled" }).waitFor();
    const id = decodeURIComponent(page.url().split("id=")[1]);
    // Stopped means stopped: no more pairs after a moment.
    const a = await api(page, "GET", `/api/sprt-tests/${id}`);
    await page.waitForTimeout(1500);
    const b = await api(page, "GET", `/api/sprt-tests/${id}`);
    check(a.body.status === "cancelled" && b.body.report.pairs === a.body.report.pairs, `pairs went on after the stop: ${a.body.report.pairs} -> ${b.body.report.pairs}`);
    await page.goto(`${base}/#/sprt`);
    await page.locator("#sprt-list tbody tr").nth(1).waitFor();
    const rows = (await page.textContent("#sprt-list")) || "";
    check(/stopped before a verdict/.test(rows) && /H1 accepted/.test(rows), `the list of tests: ${rows}`);
  });

  await step("an unknown test says so", async () => {
    await page.goto(`${base}/#/sprt?id=nope`);
    await page.locator("h1", { hasText: "No such SPRT test" }).waitFor();
  });

  await step("a plain match is played from the same page", async () => {
    await page.goto(`${base}/#/sprt`);
    await page.locator("#sprt-mode").waitFor();
    await page.fill("#sprt-a", "greedy");
    await page.fill("#sprt-b", "random");
    await page.selectOption("#sprt-mode", "match");
    await page.fill("#sprt-games", "10");
    await page.click("#sprt-start");
    await page.locator("#match-result", { hasText: "A's score" }).waitFor();
    check(/Games\s*10/.test((await page.textContent("#match-result")) || ""), `the match: ${await page.textContent("#match-result")}`);
    // A bad agent is named next to its field.
    await page.fill("#sprt-b", "nonsense:9");
    await page.click("#sprt-start");
    await page.locator("#err-sprt-b", { hasText: /nonsense/ }).waitFor();
  });

  await step("a tournament with an SPRT shows each pairing's verdict and LLR, also when reopened", async () => {
    await page.goto(`${base}/#/tournament`);
    await page.locator("#tour-start").waitFor();
    for (const box of await page.locator(".check-grid input").all()) await box.setChecked(false);
    await page.locator("label.check", { hasText: /^\s*random/ }).locator("input").check();
    await page.locator("label.check", { hasText: /^\s*greedy/ }).locator("input").check();
    await page.fill("#tour-games", "100");
    await page.fill("#tour-sprt", "0,50");
    await page.click("#tour-start");
    await page.locator("#tour-sprt-results td[data-verdict]").first().waitFor();
    const verdict = (await page.textContent("#tour-sprt-results tbody")) || "";
    check(/H1|H0|inconclusive/.test(verdict), `the pairing's verdict: ${verdict}`);
    const list = await api(page, "GET", "/api/tournaments");
    const id = list.body.tournaments[0].id;
    await page.goto(`${base}/#/tournament?id=${id}`);
    await page.locator("#tour-sprt-results td[data-verdict]").first().waitFor();
  });
});
