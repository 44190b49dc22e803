// Issue 34: "a workers page shows two `worker` processes on PostgreSQL playing a run's
// batches". The server is a PostgreSQL-backed `serve --no-batches` with two
// `kalah-tuner worker` processes beside it (tests/server/dashboard.rs starts them); a small GA
// run is started, and the workers page, reached from the top bar, shows both workers with
// batches played, their threads, games per second and heartbeats.
//
//   node tests/e2e/workers.mjs <base-url>

import { api, axeViolations, base, check, setTheme, step, withBrowser } from "./lib.mjs";

await withBrowser("workers-e2e", async (page) => {
  let runId = null;

  await step("the workers page lists both workers before any batch", async () => {
    await page.goto(`${base}/#/runs`);
    await page.click('#nav a[data-route="workers"]');
    await page.waitForURL(/#\/workers/);
    await page.locator('#workers-list tr[data-worker^="worker@"]').nth(1).waitFor();
    const rows = await page.$$eval('#workers-list tr[data-worker^="worker@"]', (trs) => trs.map((tr) => tr.dataset.status));
    check(rows.length === 2 && rows.every((s) => s === "idle"), `two idle workers, got ${rows}`);
  });

  await step("a small GA run's batches are played by both workers, as the page shows", async () => {
    // Depth-6 games, 900 a generation: the queue cuts each generation into several batches.
    const created = await api(page, "POST", "/api/runs", {
      config: { population: 10, depth: 6, generations: 3, seed: 14, fitness: { games_per_pair: 20 }, benchmark: { pairs: 2, panel: ["minimax:2"] } },
    });
    check(created.status === 201 || created.status === 202, `creating the run: ${created.status} ${created.text}`);
    runId = created.body.id;
    // Both rows count batches once each worker has written a result.
    await page.waitForFunction(
      () => {
        const rows = [...document.querySelectorAll('#workers-list tr[data-worker^="worker@"]')];
        return rows.length === 2 && rows.every((tr) => Number(tr.querySelector("td.batches")?.textContent) > 0);
      },
      null,
      { timeout: 180000 },
    );
    const { body } = await api(page, "GET", "/api/workers");
    const workers = body.workers.filter((w) => w.name.startsWith("worker@"));
    check(workers.length === 2, `two workers in /api/workers: ${JSON.stringify(body)}`);
    for (const w of workers) {
      check(w.threads === 1, `${w.name}: ${w.threads} threads, started with 1`);
      check(w.batches > 0 && w.games > 0 && w.games_per_second > 0, `${w.name}: ${JSON.stringify(w)}`);
      check(["playing", "idle"].includes(w.status), `${w.name} is ${w.status}`);
    }
    const text = (await page.textContent("#workers-list")) || "";
    check(/Games\/s/.test(text) && /Last heartbeat/.test(text), `the table's columns: ${text}`);
  });

  // axe.mjs runs on SQLite, where the page has no table; here it has two rows.
  await step("axe-core finds no serious or critical violation on the workers table, in both themes", async () => {
    const found = [];
    for (const theme of ["light", "dark"]) {
      await setTheme(page, theme);
      await page.locator('#workers-list tr[data-worker^="worker@"]').nth(1).waitFor();
      for (const v of await axeViolations(page)) found.push(`${theme}: ${v}`);
    }
    check(found.length === 0, `axe-core:\n  ${found.join("\n  ")}`);
  });

  await step("the run finishes from the workers' batches", async () => {
    const deadline = Date.now() + 300000;
    let run;
    do {
      await page.waitForTimeout(1000);
      run = (await api(page, "GET", `/api/runs/${runId}`)).body;
    } while (run.status !== "finished" && run.status !== "failed" && Date.now() < deadline);
    check(run.status === "finished", `the run is ${run.status}`);
  });
});
