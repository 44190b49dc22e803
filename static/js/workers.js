// Batch workers (`/api/workers`), as Fishtest and OpenBench show their machines: each
// `kalah-tuner worker` (and each server that plays batches) on the database's PostgreSQL
// queue, with its host, threads, status, the batch it plays now, its last heartbeat, and
// batches, games and games per second over the results it wrote. Refreshed every 2 s.

import { request } from "./api.js";
import { fmtNum, fmtTime, h, shortId, statusBadge } from "./util.js";

const POLL_MS = 2000;

export async function mount(view) {
  let stopped = false;
  let timer = null;
  const list = h("div", { id: "workers-list" }, h("p.muted", "Loading…"));
  view.append(
    h(
      "section.card",
      h("h1", "Workers"),
      h(
        "p.hint",
        "The processes that play game batches of runs from the PostgreSQL queue: kalah-tuner worker processes and servers that play batches. A worker beats every second; one silent for 10 s is shown as lost. Games per second are over every batch it wrote a result for.",
      ),
      list,
    ),
  );
  document.title = "Workers · kalah-tuner";

  const batchText = (b) =>
    b ? h("a", { href: `#/runs/${encodeURIComponent(b.run_id)}` }, `run ${shortId(b.run_id)}, generation ${b.generation}, jobs ${b.first_job}–${b.first_job + b.jobs - 1}`) : "–";

  async function refresh() {
    try {
      const { workers } = await request("GET", "workers");
      if (stopped) return;
      list.replaceChildren(
        workers.length
          ? h(
              "div.table-scroll",
              { tabIndex: 0, role: "region", "aria-label": "Workers" },
              h(
                "table.runs.responsive",
                h("thead", h("tr", ["Worker", "Host", "Threads", "Status", "Batch under way", "Batches", "Games", "Games/s", "Last heartbeat"].map((t) => h("th", { scope: "col" }, t)))),
                h(
                  "tbody",
                  workers.map((w) =>
                    h(
                      "tr",
                      { dataset: { worker: w.name, status: w.status } },
                      h("td", { dataset: { label: "Worker" } }, w.name),
                      h("td", { dataset: { label: "Host" } }, w.host),
                      h("td", { dataset: { label: "Threads" } }, String(w.threads)),
                      h("td", { dataset: { label: "Status" } }, statusBadge(w.status)),
                      h("td", { dataset: { label: "Batch under way" } }, batchText(w.batch)),
                      h("td.batches", { dataset: { label: "Batches" } }, fmtNum(w.batches, 0)),
                      h("td.games", { dataset: { label: "Games" } }, fmtNum(w.games, 0)),
                      h("td", { dataset: { label: "Games/s" } }, w.games_per_second == null ? "–" : fmtNum(w.games_per_second, 1)),
                      h("td", { dataset: { label: "Last heartbeat" } }, fmtTime(w.heartbeat_at)),
                    ),
                  ),
                ),
              ),
            )
          : h("p.empty", "No batch workers have played on this database. Start one with kalah-tuner worker --database-url postgres://…"),
      );
    } catch (e) {
      if (!stopped) list.replaceChildren(h("p.form-error", `Could not load the workers: ${e.message}`));
    }
    if (!stopped) timer = setTimeout(refresh, POLL_MS);
  }
  refresh();

  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
