// Compare page (#/compare?ids=A,B,...): two or more runs' benchmark and fitness curves on the
// same axes, and the settings in which their configs differ.

import { api } from "./api.js";
import { dataButtons, overlayChart } from "./charts.js";
import { h, shortId, TUNER_NAMES } from "./util.js";

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
  const runs = found;
  const curves = await Promise.all(ids.map((id) => api.generations(id)));
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

  view.append(
    h(
      "section.card",
      h("h1", "Compare runs"),
      h(
        "ul.compare-runs",
        runs.map((r) =>
          h("li", h("a", { href: `#/runs/${encodeURIComponent(r.id)}` }, name(r)), h("span.muted.small", ` · ${TUNER_NAMES[r.tuner] || "GA"} · ${r.status} · ${r.generations_done} / ${r.generations_total}`)),
        ),
      ),
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
  const panel = overlayChart(panelEl, "Elo vs panel", lines((g) => g.panel?.overall?.elo ?? null));
  const best = overlayChart(bestEl, "best fitness", lines((g) => g.best));
  panelTools.append(dataButtons(panel, `${stem}-panel`, "compare-panel-data"));
  bestTools.append(dataButtons(best, `${stem}-best`, "compare-best-data"));

  return () => {
    panel.destroy();
    best.destroy();
  };
}
