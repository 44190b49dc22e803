// Compare page (#/compare?ids=A,B,...): two or more runs' benchmark and fitness curves on the
// same axes, and the settings in which their configs differ.

import { api } from "./api.js";
import { dataButtons, overlayChart, setStepUnit } from "./charts.js";
import { h, isLearner, shortId, TUNER_NAMES } from "./util.js";

/** A config as dotted keys (`fitness.mode`); lists stay whole. */
function flatten(value, prefix = "", out = {}) {
  if (value && typeof value === "object" && !Array.isArray(value)) {
    for (const [k, v] of Object.entries(value)) flatten(v, prefix ? `${prefix}.${k}` : k, out);
  } else {
    out[prefix] = value;
  }
  return out;
}

const show = (v) => (v === undefined ? "—" : typeof v === "string" ? v : JSON.stringify(v));

export async function mount(view, { query }) {
  const ids = [...new Set((query.get("ids") || "").split(",").map((s) => s.trim()).filter(Boolean))];
  if (ids.length < 2) {
    view.append(
      h(
        "section.card",
        h("h1", "Compare runs"),
        h("p", "Tick two or more runs on the ", h("a", { href: "#/runs" }, "Runs"), " page and press Compare."),
      ),
    );
    return null;
  }
  const found = await Promise.all(ids.map((id) => api.run(id).catch((e) => (e.status === 404 ? null : Promise.reject(e)))));
  const missing = ids.filter((_, i) => !found[i]);
  if (missing.length) {
    view.append(
      h(
        "section.card",
        { id: "compare-missing" },
        h("h1", "Compare runs"),
        h("p", `No run ${missing.join(", ")} on this server: it may have been deleted, or the link is wrong.`),
        h("a.button", { href: "#/runs" }, "Back to the runs"),
      ),
    );
    return null;
  }
  let runs = found;
  let curves = await Promise.all(ids.map((id) => api.generations(id)));
  // Two runs of the same name are told apart by their short ids.
  const plainName = (r) => r.name || `run ${shortId(r.id)}`;
  const nameCount = new Map();
  for (const r of runs) nameCount.set(plainName(r), (nameCount.get(plainName(r)) || 0) + 1);
  const name = (r) => (nameCount.get(plainName(r)) > 1 ? `${plainName(r)} (${shortId(r.id)})` : plainName(r));
  const stem = `kalah-tuner-compare-${ids.map(shortId).join("-")}`;

  const panelEl = h("div.chart", { id: "compare-panel" });
  const bestEl = h("div.chart", { id: "compare-best" });
  const panelTools = h("span.chart-tools");
  const bestTools = h("span.chart-tools");
  const flat = runs.map((r) => flatten(r.config || {}));
  const keys = [...new Set(flat.flatMap((f) => Object.keys(f)))].sort();
  const differing = keys.filter((k) => new Set(flat.map((f) => show(f[k]))).size > 1);
  const allBox = h("input", { type: "checkbox", id: "compare-all" });
  const diffBody = h("tbody");
  const renderDiff = () =>
    diffBody.replaceChildren(
      ...(allBox.checked ? keys : differing).map((k) =>
        h("tr", { class: differing.includes(k) ? "differs" : null }, h("th", k), flat.map((f) => h("td", show(f[k])))),
      ),
    );
  allBox.addEventListener("change", renderDiff);

  const runList = h("ul.compare-runs");
  const liveNote = h("p.hint", { id: "compare-live", role: "status" });
  const renderRuns = () =>
    runList.replaceChildren(
      ...runs.map((r) =>
        h("li", h("a", { href: `#/runs/${encodeURIComponent(r.id)}` }, name(r)), h("span.muted.small", ` · ${TUNER_NAMES[r.tuner] || r.tuner || "GA"} · ${r.status} · ${r.generations_done} / ${r.generations_total} ${isLearner(r.tuner) ? "checkpoints" : "generations"}`)),
      ),
    );
  renderRuns();

  view.append(
    h(
      "section.card",
      h("h1", "Compare runs"),
      runList,
      liveNote,
    ),
    h(
      "section.card",
      h("div.card-head", h("h2", "Benchmark panel"), panelTools),
      h("p.hint", "Elo against each run's benchmark panel of its measured leaders (GA) or checkpoints (TD, Texel). Runs with different panels are not on one scale: see the config differences below."),
      panelEl,
    ),
    h("section.card", h("div.card-head", h("h2", "Best fitness"), bestTools), h("p.hint", "Each generation's best fitness, relative to its own population."), bestEl),
    h(
      "section.card",
      h("h2", "Config differences"),
      h("p.hint", { id: "compare-diff-count" }, `${differing.length} of ${keys.length} settings differ.`),
      h("label.inline", allBox, " show every setting"),
      h("div.table-scroll", { tabIndex: 0, role: "region", "aria-label": "Config differences" }, h("table.compact.diff", { id: "compare-diff" }, h("thead", h("tr", h("th", "setting"), runs.map((r) => h("th", name(r))))), diffBody)),
    ),
  );
  renderDiff();

  const lines = (pick) =>
    runs.map((r, i) => {
      const gens = (curves[i].generations || []).filter((g) => pick(g) != null);
      return { label: name(r), id: r.id, name: r.name ?? null, xs: gens.map((g) => g.generation), ys: gens.map(pick) };
    });
  // The x axis counts generations, checkpoints, or both when runs of both kinds are compared.
  const learners = runs.filter((r) => isLearner(r.tuner)).length;
  setStepUnit(learners === 0 ? "generation" : learners === runs.length ? "checkpoint" : "generation or checkpoint");
  let panel = null;
  let best = null;
  const draw = () => {
    panel?.destroy();
    best?.destroy();
    panelEl.replaceChildren();
    bestEl.replaceChildren();
    panel = overlayChart(panelEl, "Elo vs panel", lines((g) => g.panel?.overall?.elo ?? null));
    best = overlayChart(bestEl, "best fitness", lines((g) => g.best));
    panelTools.replaceChildren(dataButtons(panel, `${stem}-panel`, "compare-panel-data"));
    bestTools.replaceChildren(dataButtons(best, `${stem}-best`, "compare-best-data"));
  };
  draw();

  // While a compared run runs, the page reads the runs again every few seconds and redraws
  // when one has moved on; it says so, and says when every run has ended.
  const ACTIVE = new Set(["queued", "running"]);
  let timer = null;
  let stopped = false;
  const say = () => {
    const going = runs.filter((r) => ACTIVE.has(r.status)).length;
    liveNote.textContent = going
      ? `Live: ${going} of these runs ${going === 1 ? "is" : "are"} still going; the charts follow every ${REFRESH_MS / 1000} s.`
      : "Every compared run has ended: the charts are final.";
  };
  const refresh = async () => {
    try {
      const fresh = await Promise.all(ids.map((id) => api.run(id)));
      if (stopped) return;
      const moved = fresh.some((r, i) => r.generations_done !== runs[i].generations_done || r.status !== runs[i].status);
      if (moved) {
        const freshCurves = await Promise.all(ids.map((id) => api.generations(id)));
        if (stopped) return;
        runs = fresh;
        curves = freshCurves;
        renderRuns();
        draw();
      }
    } catch {
      // Missed once (the server away): the next look tries again.
    }
    say();
    if (!stopped && runs.some((r) => ACTIVE.has(r.status))) timer = setTimeout(refresh, REFRESH_MS);
  };
  say();
  if (runs.some((r) => ACTIVE.has(r.status))) timer = setTimeout(refresh, REFRESH_MS);

  return () => {
    stopped = true;
    clearTimeout(timer);
    panel?.destroy();
    best?.destroy();
  };
}

/** How often the page looks at compared runs that are still going. */
const REFRESH_MS = 3000;
