// Runs page: every run with status, progress, best fitness and actions, refreshed by polling.
// Rows are keyed by run id and updated in place, so a refresh does not rebuild the table.

import { api } from "./api.js";
import { flash, fmtNum, fmtTime, h, shortId, statusBadge, TUNER_NAMES } from "./util.js";

const POLL_MS = 2000;
const ACTIVE = new Set(["queued", "running"]);

export async function mount(view) {
  const tbody = h("tbody");
  const empty = h(
    "p.empty",
    { hidden: true },
    "No runs yet. ",
    h("a", { href: "#/new" }, "Start one"),
    ".",
  );
  view.append(
    h(
      "section.card",
      h(
        "div.card-head",
        h("h1", "Runs"),
        h("a.button.primary", { href: "#/new" }, "New run"),
      ),
      h(
        "table.runs.responsive",
        h(
          "thead",
          h(
            "tr",
            h("th", "Run"),
            h("th", "Status"),
            h("th.progress-col", "Progress"),
            h("th.num", "Best fitness"),
            h("th", "Started"),
            h("th", "Finished"),
            h("th", "Actions"),
          ),
        ),
        tbody,
      ),
      empty,
    ),
  );

  const rows = new Map();
  let timer = null;
  let stopped = false;

  async function refresh() {
    if (stopped) return;
    try {
      const { runs } = await api.runs();
      if (stopped) return;
      const seen = new Set();
      runs.forEach((r, i) => {
        seen.add(r.id);
        let row = rows.get(r.id);
        if (!row) {
          row = makeRow(r, refresh);
          rows.set(r.id, row);
        }
        // Keep the server's order (newest first) without touching rows already in place.
        if (tbody.children[i] !== row.tr) tbody.insertBefore(row.tr, tbody.children[i] || null);
        row.update(r);
      });
      for (const [id, row] of rows) {
        if (!seen.has(id)) {
          row.tr.remove();
          rows.delete(id);
        }
      }
      empty.hidden = runs.length > 0;
    } catch (e) {
      flash(`Could not load the runs: ${e.message}`, "error");
    }
    if (!stopped) timer = setTimeout(refresh, document.hidden ? POLL_MS * 5 : POLL_MS);
  }

  await refresh();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}

function makeRow(run, refresh) {
  const link = h("a", { href: `#/runs/${encodeURIComponent(run.id)}` });
  const sub = h("div.muted.small");
  const status = h("span");
  const bar = h("div.bar-fill");
  const progressText = h("span.small");
  const best = h("span");
  const started = h("span");
  const finished = h("span");
  const err = h("div.error-text.small");

  const act = async (label, fn) => {
    try {
      await fn();
      flash(label, "ok");
    } catch (e) {
      flash(e.message, "error");
    }
    refresh();
  };
  const cancel = h("button.small", {
    onclick: () => act("Run cancelled.", () => api.cancelRun(run.id)),
  }, "Cancel");
  const resume = h("button.small", {
    onclick: () => act("Run queued again.", () => api.resumeRun(run.id)),
  }, "Resume");
  const del = h("button.small.danger", {
    onclick: () => {
      if (!confirm(`Delete run ${run.name || shortId(run.id)} and all its generations?`)) return;
      act("Run deleted.", () => api.deleteRun(run.id));
    },
  }, "Delete");
  const exp = h("a.button.small", { href: api.exportUrl(run.id), download: `kalah-tuner-${run.id}.json` }, "Export");

  const tr = h(
    "tr",
    { dataset: { id: run.id } },
    h("td", { dataset: { label: "Run" } }, link, sub, err),
    h("td", { dataset: { label: "Status" } }, status),
    h(
      "td.progress-col",
      { dataset: { label: "Progress" } },
      h("div.bar", bar),
      progressText,
    ),
    h("td.num", { dataset: { label: "Best fitness" } }, best),
    h("td", { dataset: { label: "Started" } }, started),
    h("td", { dataset: { label: "Finished" } }, finished),
    h("td.actions", { dataset: { label: "Actions" } }, cancel, resume, exp, del),
  );

  let last = "";
  function update(r) {
    // Most polls change nothing: skip the DOM when the run is the same.
    const key = JSON.stringify([r.status, r.generations_done, r.best_fitness, r.started_at, r.finished_at, r.error, r.name]);
    if (key === last) return;
    last = key;
    link.textContent = r.name || `run ${shortId(r.id)}`;
    sub.textContent = [TUNER_NAMES[r.tuner] || "GA", r.preset ? `preset ${r.preset}` : "custom", `seed ${r.seed}`, shortId(r.id)].join(" · ");
    status.replaceChildren(statusBadge(r.status));
    const p = Math.max(0, Math.min(1, r.progress ?? (r.generations_total ? r.generations_done / r.generations_total : 0)));
    bar.style.width = `${(p * 100).toFixed(1)}%`;
    bar.classList.toggle("live", r.status === "running");
    progressText.textContent = `${r.generations_done} / ${r.generations_total}`;
    best.textContent = fmtNum(r.best_fitness);
    started.textContent = fmtTime(r.started_at);
    finished.textContent = fmtTime(r.finished_at);
    err.textContent = r.error || (r.stop_reason && r.stop_reason !== "generations" ? `stopped: ${r.stop_reason}` : "");
    cancel.hidden = !ACTIVE.has(r.status);
    resume.hidden = !(r.status === "cancelled" || r.status === "failed");
    exp.hidden = !(r.generations_done > 0);
  }
  return { tr, update };
}
