// Runs page: every run with status, progress, best fitness and actions, refreshed by polling.
// Rows are keyed by run id and updated in place, so a refresh does not rebuild the table.

import { api } from "./api.js";
import { clearFlash, flash, fmtDuration, fmtNum, fmtTime, h, shortId, isLearner, statusBadge, TUNER_NAMES } from "./util.js";

const POLL_MS = 2000;
const ACTIVE = new Set(["queued", "running"]);

/** How long a run has taken (so far, while it runs), in milliseconds; null before it starts. */
function durationMs(r) {
  if (!r.started_at) return null;
  const end = r.finished_at ? new Date(r.finished_at) : new Date();
  return end - new Date(r.started_at);
}

/** Sortable columns: the value each sorts by. */
const SORT_KEYS = {
  name: (r) => (r.name || `run ${shortId(r.id)}`).toLowerCase(),
  status: (r) => r.status,
  // A GA's fitness is relative to its population, a learner's a panel score: not one scale,
  // so each kind sorts among its own (population tuners first), never interleaved.
  best: (r) => [isLearner(r.tuner) ? 0 : 1, r.best_fitness ?? -Infinity],
  started: (r) => r.started_at || "",
  duration: (r) => durationMs(r) ?? -Infinity,
};

/** Orders two sort keys: plain values, or arrays of them compared item by item. */
function compareKeys(x, y) {
  if (Array.isArray(x) && Array.isArray(y)) {
    for (let k = 0; k < Math.min(x.length, y.length); k++) {
      const c = compareKeys(x[k], y[k]);
      if (c) return c;
    }
    return x.length - y.length;
  }
  return x < y ? -1 : x > y ? 1 : 0;
}

/**
 * Whether a run matches every word of a search: name, tags, tuner, preset ("custom" for none),
 * status or notes anywhere; the id only from its start or the short id's (a digit alone would
 * otherwise match every run).
 */
function matches(r, query) {
  const text = [r.name, ...(r.tags || []), r.tuner, TUNER_NAMES[r.tuner], r.preset || "custom", r.status, r.notes]
    .filter(Boolean)
    .join(" ")
    .toLowerCase();
  const ids = [String(r.id || "").toLowerCase(), shortId(r.id)];
  return query
    .toLowerCase()
    .split(/\s+/)
    .filter(Boolean)
    .every((word) => text.includes(word) || (word.length >= 4 && ids.some((id) => id.startsWith(word))));
}

export async function mount(view, { query: params } = {}) {
  const tbody = h("tbody");
  const search = h("input", { id: "runs-search", type: "search", placeholder: "search name, tag, tuner, status…", value: params?.get?.("q") || "" });
  const shown = h("span.muted.small", { id: "runs-shown" });
  let sortKey = null;
  let sortDir = 1;
  let lastRuns = [];
  const sortHeader = (key, label, cls = "th") =>
    h(cls, { dataset: { sort: key }, "aria-sort": "none" }, h("button.sort", { type: "button", onclick: () => sortBy(key) }, label));
  const headers = [
    sortHeader("name", "Run"),
    sortHeader("status", "Status"),
    h("th.progress-col", "Progress"),
    sortHeader("best", "Best fitness", "th.num"),
    sortHeader("started", "Started"),
    h("th", "Finished"),
    sortHeader("duration", "Duration", "th.num"),
    h("th", "Actions"),
  ];
  function sortBy(key) {
    if (sortKey === key) sortDir = -sortDir;
    else {
      sortKey = key;
      sortDir = key === "name" || key === "status" ? 1 : -1;
    }
    for (const th of headers) {
      if (th.dataset.sort) th.setAttribute("aria-sort", th.dataset.sort === sortKey ? (sortDir > 0 ? "ascending" : "descending") : "none");
    }
    place(lastRuns);
  }
  search.addEventListener("input", () => place(lastRuns));
  const compareBtn = h("button", {
    type: "button",
    id: "runs-compare",
    onclick: () => {
      const ids = [...tbody.querySelectorAll("input.pick:checked")].map((b) => b.dataset.id);
      if (ids.length < 2) {
        flash("Tick two or more runs to compare.", "error");
        return;
      }
      location.hash = `#/compare?ids=${ids.map(encodeURIComponent).join(",")}`;
    },
  }, "Compare ticked runs");
  const empty = h(
    "p.empty",
    { hidden: true },
    "No runs yet. ",
    h("a", { href: "#/new" }, "Start one"),
    ".",
  );
  const intro = h(
    "details.card.intro",
    { id: "intro" },
    h("summary", "What is this?"),
    h(
      "p",
      "kalah-tuner tunes the weights of a Kalah player's evaluation. A ",
      h("strong", "run"),
      " starts from a config (start one under New run, or over the API with any tuner: the genetic algorithm, CMA-ES, SPSA, differential evolution, TD(λ), TD-Leaf(λ) or Texel fitting) and plays thousands of games; its page shows, step by step, whether its players really get stronger against a fixed benchmark panel, and its champion can be exported as JSON or played.",
    ),
    h("p", h("strong", "Play"), " puts you at the board against any agent, or lets two agents play while you watch. ", h("strong", "Tournament"), " plays every pair of the agents you pick and shows the cross-table with scores, intervals and Elo."),
  );
  view.append(
    intro,
    h(
      "section.card",
      h(
        "div.card-head",
        h("h1", "Runs"),
        h("a.button.primary", { href: "#/new" }, "New run"),
      ),
      h("div.runs-tools", h("label", { for: "runs-search" }, "Search "), search, shown, compareBtn),
      h("table.runs.responsive", h("thead", h("tr", headers)), tbody),
      empty,
    ),
  );

  const rows = new Map();
  let firstLoad = true;
  let timer = null;
  let stopped = false;

  async function refresh() {
    if (stopped) return;
    try {
      const { runs } = await api.runs();
      if (stopped) return;
      lastRuns = runs;
      place(runs);
      empty.hidden = runs.length > 0;
      // Open for a newcomer (no runs yet), folded away once there is work to show.
      if (firstLoad) intro.open = runs.length === 0;
      firstLoad = false;
      // The server answers again: an earlier failure no longer holds.
      clearFlash("Could not load the runs");
    } catch (e) {
      flash(`Could not load the runs: ${e.message}`, "error");
    }
    if (!stopped) timer = setTimeout(refresh, document.hidden ? POLL_MS * 5 : POLL_MS);
  }

  /** Shows the runs that match the search, in the chosen order (else the server's, newest first). */
  function place(runs) {
    const seen = new Set(runs.map((r) => r.id));
    for (const [id, row] of rows) {
      if (!seen.has(id)) {
        row.tr.remove();
        rows.delete(id);
      }
    }
    let visible = runs.filter((r) => matches(r, search.value));
    if (sortKey) {
      const key = SORT_KEYS[sortKey];
      // Stable: equal keys keep the server's order.
      visible = visible
        .map((r, i) => [r, i])
        .sort(([a, i], [b, j]) => {
          return compareKeys(key(a), key(b)) * sortDir || i - j;
        })
        .map(([r]) => r);
    }
    const wanted = new Set(visible.map((r) => r.id));
    for (const [id, row] of rows) if (!wanted.has(id)) row.tr.remove();
    visible.forEach((r, i) => {
      let row = rows.get(r.id);
      if (!row) {
        row = makeRow(r, refresh);
        rows.set(r.id, row);
      }
      // Rows already in place are not touched.
      if (tbody.children[i] !== row.tr) tbody.insertBefore(row.tr, tbody.children[i] || null);
      row.update(r);
    });
    shown.textContent = search.value.trim() ? `${visible.length} of ${runs.length} runs` : "";
  }

  await refresh();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}

function makeRow(run, refresh) {
  const link = h("a.run-name", { href: `#/runs/${encodeURIComponent(run.id)}` });
  const pick = h("input.pick", { type: "checkbox", dataset: { id: run.id }, "aria-label": "compare this run" });
  const sub = h("div.muted.small");
  const status = h("span");
  const bar = h("div.bar-fill");
  const progressText = h("span.small");
  const best = h("span");
  const started = h("span");
  const finished = h("span");
  const duration = h("span");
  const tags = h("div.tags");
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
    h("td", { dataset: { label: "Run" } }, pick, " ", link, sub, tags, err),
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
    h("td.num", { dataset: { label: "Duration" } }, duration),
    h("td.actions", { dataset: { label: "Actions" } }, cancel, resume, exp, del),
  );

  let last = "";
  function update(r) {
    // Most polls change nothing: skip the DOM when the run is the same.
    duration.textContent = fmtDuration(durationMs(r));
    const key = JSON.stringify([r.status, r.generations_done, r.best_fitness, r.started_at, r.finished_at, r.error, r.name, r.tags]);
    if (key === last) return;
    last = key;
    const name = r.name || `run ${shortId(r.id)}`;
    link.textContent = name;
    // A long name is cut short on screen; the whole of it is in the tooltip.
    link.title = name;
    pick.setAttribute("aria-label", `compare ${name}`);
    tags.replaceChildren(...(r.tags || []).map((t) => h("span.tag-chip", t)));
    sub.textContent = [TUNER_NAMES[r.tuner] || r.tuner || "GA", r.preset ? `preset ${r.preset}` : "custom", `seed ${r.seed}`, r.owner ? `by ${r.owner}` : null, shortId(r.id)].filter(Boolean).join(" · ");
    status.replaceChildren(statusBadge(r.status));
    const p = Math.max(0, Math.min(1, r.progress ?? (r.generations_total ? r.generations_done / r.generations_total : 0)));
    bar.style.width = `${(p * 100).toFixed(1)}%`;
    bar.classList.toggle("live", r.status === "running");
    progressText.textContent = `${r.generations_done} / ${r.generations_total} ${isLearner(r.tuner) ? "checkpoints" : "generations"}`;
    // A GA's fitness is relative to its own population, a learner's is a score against the
    // benchmark panel: the two are not on one scale, so the cell says which it is.
    const learning = isLearner(r.tuner);
    best.replaceChildren(fmtNum(r.best_fitness), ...(learning && r.best_fitness != null ? [h("span.muted.small", " panel")] : []));
    best.title = learning ? "the champion's score against the benchmark panel" : "the champion's fitness, relative to its population";
    started.textContent = fmtTime(r.started_at);
    finished.textContent = fmtTime(r.finished_at);
    err.textContent = r.error || (r.stop_reason && r.stop_reason !== "generations" ? `stopped: ${r.stop_reason}` : "");
    cancel.hidden = !ACTIVE.has(r.status);
    resume.hidden = !(r.status === "cancelled" || r.status === "failed");
    exp.hidden = !(r.generations_done > 0);
  }
  return { tr, update };
}
