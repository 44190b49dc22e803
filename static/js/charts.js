// uPlot wrappers for the run page: the charts keep their own column arrays, take new
// generations by appending to them, and redraw at most once per animation frame.

import { h, PALETTE, rafThrottle, seriesDash } from "./util.js";

function themeColors() {
  const css = getComputedStyle(document.documentElement);
  return {
    fg: css.getPropertyValue("--muted").trim() || "#666",
    grid: css.getPropertyValue("--grid").trim() || "rgba(128,128,128,0.15)",
  };
}

// What the x axis of a run's charts counts: a population tuner's generations, or a learning
// tuner's checkpoints (`setStepUnit`, before the run's charts are made).
let stepUnit = "generation";

/** Names the steps of the run whose charts are made next: "generation" or "checkpoint". */
export function setStepUnit(unit) {
  stepUnit = unit;
}

function axes(yLabel) {
  const c = themeColors();
  const axis = { stroke: c.fg, grid: { stroke: c.grid, width: 1 }, ticks: { stroke: c.grid, width: 1 } };
  return [
    // Generations are whole numbers: ticks step by whole amounts only.
    { ...axis, label: stepUnit, labelSize: 20, size: 36, incrs: GENERATION_STEPS, values: (u, splits) => splits.map((v) => String(Math.round(v))) },
    { ...axis, label: yLabel, labelSize: 20, size: 50, values: (u, splits) => fmtTicks(splits) },
  ];
}

const GENERATION_STEPS = [1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000, 2000, 2500, 5000, 10000, 20000, 50000];

/** The generation axis's range: the generations shown (0 to 1 before there are any). A lone
 * generation uPlot ranges by its own rule, whatever this says: see `fitLonePoint`. */
const generationRange = (u, lo, hi) => (lo == null ? [0, 1] : [lo, hi]);
const generationScale = { time: false, range: generationRange };

/**
 * An axis's tick labels, all with the decimals their spacing needs: whole steps give whole
 * numbers (a zero reads "0" beside "100", not "0.00"), and other labels keep their own form.
 */
function fmtTicks(splits) {
  const steps = splits.slice(1).map((v, i) => Math.abs(v - splits[i])).filter((d) => d > 0);
  const step = steps.length ? Math.min(...steps) : 0;
  if (step >= 1 && splits.every((v) => v == null || Number.isInteger(Math.round(v * 1e9) / 1e9))) {
    return splits.map((v) => (v == null ? "" : Math.round(v).toLocaleString("en-US")));
  }
  return splits.map((v) => fmtTick(v));
}

function fmtTick(v) {
  if (v == null) return "";
  const a = Math.abs(v);
  if (a >= 100) return v.toFixed(0);
  if (a >= 1) return v.toFixed(1).replace(/\.0$/, "");
  return v.toFixed(2);
}

const xSeries = () => ({ label: stepUnit, value: (u, v) => (v == null ? "–" : String(v)) });
const val = (digits) => (u, v) => (v == null ? "–" : v.toFixed(digits));

/**
 * A chart bound to `el` that follows its width. `columns` are arrays that the caller appends
 * to; `redraw()` hands them to uPlot (throttled to one draw per frame).
 */
class LiveChart {
  constructor(el, opts, columns, height) {
    this.el = el;
    this.opts = opts;
    this.columns = columns;
    this.height = height;
    this.onZoom = null;
    // A drag that is tall as well as wide zooms the values too (a flat one, the generations
    // only). The y scale ranges itself from the data on every draw, so the zoom is kept here
    // and handed to it by its range function until a double-click resets.
    this.yZoom = null;
    this.log = false;
    /** Listeners on the plot's area, attached again when the plot is rebuilt. */
    this.overListeners = [];
    this.build();
    this.redraw = rafThrottle(() => {
      this.plot.setData(this.plotData());
      this.fitLonePoint();
      this.describe();
    });
    // A canvas says nothing to a screen reader: the chart's element carries its latest values.
    // A figure, not an image: an image's content is hidden, and the legend's buttons with it.
    el.setAttribute("role", "figure");
    this.describe();
    this.resizer = new ResizeObserver(
      rafThrottle(() => {
        const w = Math.max(200, this.el.clientWidth);
        if (w !== this.plot.width) this.plot.setSize({ width: w, height: this.heightFor(w) });
      }),
    );
    this.resizer.observe(el);
  }

  /** Makes the uPlot instance (again, after the scale's kind changed). */
  build() {
    const opts = this.opts;
    const width = Math.max(200, this.el.clientWidth || 600);
    // Tell linked charts when the generations shown change (a drag to zoom, a reset).
    const hooks = { ...(opts.hooks || {}) };
    hooks.setScale = [...(hooks.setScale || []), (u, key) => key === "x" && this.onZoom && this.onZoom(u.scales.x.min, u.scales.x.max)];
    // uPlot's own zoom on drag is off (drag.setScale false): it would set y, which the range
    // function then overrides, and it fires no hook with the selection. The selection comes
    // here instead and is turned into scales.
    hooks.setSelect = [
      ...(hooks.setSelect || []),
      (u) => {
        const s = u.select;
        if (s.width <= 0) return;
        if (s.height > 0 && s.height < u.over.clientHeight - 1) this.yZoom = [u.posToVal(s.top + s.height, "y"), u.posToVal(s.top, "y")];
        const min = u.posToVal(s.left, "x");
        const max = u.posToVal(s.left + s.width, "x");
        u.setSelect({ left: 0, top: 0, width: 0, height: 0 }, false);
        u.setScale("x", { min, max });
      },
    ];
    const y = opts.scales?.y || {};
    // A log scale shows only positive values: its range comes from those.
    const yRange = this.log
      ? (u, lo, hi) => uPlot.rangeLog(Math.max(lo ?? 1e-3, 1e-6), Math.max(hi ?? 1, 1e-5), 10, true)
      : y.range || ((u, lo, hi) => uPlot.rangeNum(lo ?? 0, hi ?? 1, 0.1, true));
    const scales = {
      ...(opts.scales || {}),
      y: { ...y, ...(this.log ? { distr: 3, log: 10 } : {}), range: (u, lo, hi) => (this.yZoom ? [...this.yZoom] : yRange(u, lo, hi)) },
    };
    const cursor = { ...(opts.cursor || {}), drag: { x: true, uni: 30, ...(opts.cursor?.drag || {}), y: true, setScale: false } };
    hooks.setSeries = [...(hooks.setSeries || []), () => this.legendState()];
    if (this.plot) this.plot.destroy();
    // A log scale cannot draw zero or less: those points become gaps.
    this.plot = new uPlot({ ...opts, scales, cursor, hooks, width, height: this.heightFor(width) }, this.plotData(), this.el);
    this.plot.over.addEventListener("dblclick", () => {
      this.yZoom = null;
      // After uPlot's own reset of the generations: range the values from the data again.
      setTimeout(() => this.plot.setData(this.plotData()), 0);
    });
    for (const [type, fn] of this.overListeners) this.plot.over.addEventListener(type, fn);
    this.keyboardLegend();
    // For the browser test, which reads scales and tick labels that live only on the canvas.
    this.el.uplot = this.plot;
    this.el.chart = this;
    this.fitLonePoint();
  }

  /**
   * The legend's names are buttons for the keyboard too: Tab reaches them, Enter or Space
   * hides or shows the line (uPlot listens for clicks only), aria-pressed says which.
   */
  keyboardLegend() {
    const rows = this.plot.root.querySelectorAll(".u-legend tr.u-series");
    rows.forEach((tr, i) => {
      const th = tr.querySelector("th");
      if (i === 0 || !th) return;
      th.tabIndex = 0;
      th.setAttribute("role", "button");
      th.addEventListener("keydown", (e) => {
        if (e.key !== "Enter" && e.key !== " ") return;
        e.preventDefault();
        th.dispatchEvent(new MouseEvent("click", { bubbles: true }));
      });
    });
    this.legendState();
    // The plot is drawn on a canvas; the chart's element carries its text (see describe).
    const wrap = this.plot.root.querySelector(".u-wrap");
    if (wrap) wrap.setAttribute("aria-hidden", "true");
  }

  legendState() {
    if (!this.plot) return;
    const rows = this.plot.root.querySelectorAll(".u-legend tr.u-series");
    rows.forEach((tr, i) => {
      const th = tr.querySelector("th");
      if (i > 0 && th && this.plot.series[i]) th.setAttribute("aria-pressed", String(this.plot.series[i].show !== false));
    });
  }

  /** The columns as the plot draws them (without values a log scale cannot show). */
  plotData() {
    return this.log ? this.columns.map((c, i) => (i === 0 ? c : c.map((v) => (v != null && v > 0 ? v : null)))) : this.columns;
  }

  /** Switches the value axis between linear and logarithmic. */
  setLog(on) {
    if (this.log === on) return;
    this.log = on;
    this.yZoom = null;
    this.build();
    this.describe();
  }

  /** Adds a listener on the plot's area that survives rebuilds. */
  onOver(type, fn) {
    this.overListeners.push([type, fn]);
    this.plot.over.addEventListener(type, fn);
  }

  /**
   * uPlot ranges a lone point by its own rule (a first generation 0 would span 0 to 100) and
   * not by the scale's range function: one generation spans one.
   */
  fitLonePoint() {
    const xs = this.columns[0];
    if (xs && xs.length === 1) this.plot.setScale("x", { min: xs[0], max: xs[0] + 1 });
  }

  heightFor(width) {
    // Phones get flatter charts so that two fit on a screen.
    return width < 500 ? Math.round(this.height * 0.75) : this.height;
  }

  destroy() {
    this.resizer.disconnect();
    this.plot.destroy();
  }

  /** Sets the element's text alternative: the chart's name and its last generation's values. */
  describe() {
    const name = this.el.closest("section")?.querySelector("h2")?.textContent?.trim() || "Chart";
    const xs = this.columns[0] || [];
    if (!xs.length) {
      this.el.setAttribute("aria-label", `${name}: no data yet`);
      return;
    }
    const i = xs.length - 1;
    const labels = this.labels();
    const values = this.columns
      .slice(1)
      .map((c, k) => [labels[k + 1], c[i]])
      .filter(([, v]) => v != null)
      .slice(0, 8)
      .map(([l, v]) => `${l} ${Number.isInteger(v) ? v : Number(v).toFixed(3)}`);
    this.el.setAttribute("aria-label", `${name}, ${xs.length} generations; at generation ${xs[i]}: ${values.join(", ")}`);
  }

  /** The series' labels, x first, as the chart's legend names them. */
  labels() {
    return this.plot.series.map((s, i) => (i === 0 ? "generation" : String(s.label ?? `series ${i}`)));
  }

  /** The chart's data as CSV: a header of series labels, then one row per generation. */
  toCsv() {
    const quote = (t) => (/[",\n]/.test(t) ? `"${t.replace(/"/g, '""')}"` : t);
    const rows = [this.labels().map(quote).join(",")];
    const xs = this.columns[0] || [];
    for (let i = 0; i < xs.length; i++) rows.push(this.columns.map((c) => (c[i] == null ? "" : String(c[i]))).join(","));
    return rows.join("\n") + "\n";
  }

  /** The chart's data as JSON: one object per generation, keyed by series label. */
  toJson() {
    const labels = this.labels();
    const xs = this.columns[0] || [];
    const rows = xs.map((_, i) => Object.fromEntries(labels.map((l, k) => [l, this.columns[k][i] ?? null])));
    return JSON.stringify(rows, null, 1);
  }

  /**
   * The chart as a PNG data URL: on the page's card colour (not transparent), with the
   * chart's title (and `this.pngTitle`, the run's name, when set) above and the shown
   * series' names in their colours below.
   */
  toPng() {
    const plot = this.plot.ctx.canvas;
    const css = getComputedStyle(document.documentElement);
    const bg = css.getPropertyValue("--card").trim() || "#ffffff";
    const fg = css.getPropertyValue("--fg").trim() || "#1d1f21";
    const ratio = plot.width / Math.max(1, this.plot.width);
    const pad = Math.round(8 * ratio);
    const line = Math.round(18 * ratio);
    const font = `${Math.round(13 * ratio)}px system-ui, sans-serif`;
    const name = this.el.closest("section")?.querySelector("h2")?.textContent?.trim() || "Chart";
    const title = this.pngTitle ? `${name}: ${this.pngTitle}` : name;
    const shown = this.plot.series.map((s, i) => ({ s, i })).filter(({ s, i }) => i > 0 && s.show !== false);
    // The legend's entries, wrapped to the plot's width.
    const measure = document.createElement("canvas").getContext("2d");
    measure.font = font;
    const rows = [[]];
    let x = pad;
    for (const { s, i } of shown) {
      const text = String(s.label ?? `series ${i}`);
      const w = line + measure.measureText(text).width + pad * 2;
      if (x + w > plot.width && rows[rows.length - 1].length) {
        rows.push([]);
        x = pad;
      }
      rows[rows.length - 1].push({ text, colour: typeof s.stroke === "function" ? s.stroke(this.plot, i) : s.stroke, x });
      x += w;
    }
    const top = line + pad * 2;
    const out = document.createElement("canvas");
    out.width = plot.width;
    out.height = top + plot.height + rows.length * line + pad * 2;
    const ctx = out.getContext("2d");
    ctx.fillStyle = bg;
    ctx.fillRect(0, 0, out.width, out.height);
    ctx.fillStyle = fg;
    ctx.font = `600 ${font}`;
    ctx.textBaseline = "middle";
    ctx.fillText(title, pad, pad + line / 2);
    ctx.drawImage(plot, 0, top);
    ctx.font = font;
    rows.forEach((row, r) => {
      const y = top + plot.height + pad + r * line + line / 2;
      for (const e of row) {
        ctx.fillStyle = e.colour || fg;
        ctx.fillRect(e.x, y - line / 6, line * 0.7, Math.max(2, line / 3));
        ctx.fillStyle = fg;
        ctx.fillText(e.text, e.x + line, y);
      }
    });
    return out.toDataURL("image/png");
  }
}

/** Saves `content` (a string or a data URL) as the file `name`. */
function download(name, content, type) {
  const url = content.startsWith("data:") ? content : URL.createObjectURL(new Blob([content], { type }));
  const a = document.createElement("a");
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  if (!content.startsWith("data:")) setTimeout(() => URL.revokeObjectURL(url), 10000);
}

/**
 * Buttons that download a chart's data as CSV or JSON, or the chart as PNG. `name` is the
 * files' stem (run id and chart); `id` prefixes the buttons' ids.
 */
export function dataButtons(chart, name, id) {
  const button = (kind, label, make, type) =>
    h("button.small", { type: "button", id: `${id}-${kind}`, title: `Download this chart ${kind === "png" ? "as an image" : `'s data as ${label}`}`, onclick: () => download(`${name}.${kind}`, make(), type) }, label);
  return h(
    "span.data-buttons",
    button("csv", "CSV", () => chart.toCsv(), "text/csv"),
    button("json", "JSON", () => chart.toJson(), "application/json"),
    button("png", "PNG", () => chart.toPng(), "image/png"),
  );
}

/** best, mean, min, mean ± std (as a band) and the hall of fame, per generation. */
export function fitnessChart(el, onPick, { learning = false } = {}) {
  // A learning run has one player a checkpoint: best, mean and min coincide, and it has no
  // spread and no hall of fame, so its chart has the one line.
  const cols = learning ? [[], []] : [[], [], [], [], [], [], []]; // x, best, mean, min, mean+std, mean-std, best so far
  const band = "rgba(31,119,180,0.15)";
  const opts = {
    class: "chart-fitness",
    series: learning
      ? [xSeries(), { label: "fitness", stroke: PALETTE[1], width: 2, value: val(3) }]
      : [
          xSeries(),
          { label: "best", stroke: PALETTE[1], width: 2, value: val(3) },
          { label: "mean", stroke: PALETTE[0], width: 2, value: val(3) },
          { label: "min", stroke: PALETTE[9], width: 1.5, value: val(3) },
          { label: "mean+std", stroke: "rgba(31,119,180,0.35)", width: 1, value: val(3) },
          { label: "mean−std", stroke: "rgba(31,119,180,0.35)", width: 1, value: val(3) },
          { label: "hall of fame", stroke: PALETTE[3], width: 1.5, dash: [6, 4], value: val(3) },
        ],
    bands: learning ? [] : [{ series: [4, 5], fill: band }],
    scales: { x: generationScale, y: { range: (u, lo, hi) => padRange(lo, hi, 0, 1) } },
    axes: axes("fitness"),
    cursor: { drag: { x: true, y: false } },
  };
  const chart = new LiveChart(el, opts, cols, 280);
  if (onPick) pickOnClick(chart, onPick);
  return {
    chart,
    push(g) {
      cols[0].push(g.generation);
      cols[1].push(g.best);
      if (learning) return;
      const mean = g.mean;
      const std = g.std ?? 0;
      cols[2].push(mean);
      cols[3].push(g.min);
      cols[4].push(mean == null ? null : mean + std);
      cols[5].push(mean == null ? null : mean - std);
      cols[6].push(g.best_so_far ?? null);
    },
    redraw: () => chart.redraw(),
    count: () => cols[0].length,
    destroy: () => chart.destroy(),
  };
}

/**
 * The benchmark panel: Elo of each measured generation's leader against the whole panel with
 * its 95% band, against each panel agent, and the champion's. Unmeasured generations leave
 * gaps.
 */
export function panelChart(el, agents) {
  const cols = [[], [], [], [], [], ...agents.map(() => [])]; // x, elo, low, high, champion, per agent
  const opts = {
    class: "chart-panel",
    series: [
      xSeries(),
      { label: "leader vs panel", stroke: PALETTE[1], width: 2.5, value: val(0), spanGaps: true },
      { label: "95% low", stroke: "rgba(255,127,14,0.35)", width: 1, value: val(0), spanGaps: true },
      { label: "95% high", stroke: "rgba(255,127,14,0.35)", width: 1, value: val(0), spanGaps: true },
      { label: "champion", stroke: PALETTE[3], width: 1.5, dash: [6, 4], value: val(0), spanGaps: true },
      ...agents.map((a, i) => ({ label: `vs ${a}`, stroke: PALETTE[(i + 4) % PALETTE.length], width: 1, value: val(0), spanGaps: true, show: false })),
    ],
    bands: [{ series: [3, 2], fill: "rgba(255,127,14,0.15)" }],
    scales: { x: generationScale },
    axes: axes("Elo vs panel"),
  };
  const chart = new LiveChart(el, opts, cols, 260);
  let measured = 0;
  return {
    chart,
    push(g) {
      const p = g.panel;
      cols[0].push(g.generation);
      cols[1].push(p ? p.overall.elo : null);
      cols[2].push(p ? p.overall.elo_low : null);
      cols[3].push(p ? p.overall.elo_high : null);
      cols[4].push(p ? p.champion.elo : null);
      for (let i = 0; i < agents.length; i++) cols[5 + i].push(p?.per_agent?.[i]?.elo ?? null);
      if (p) measured++;
    },
    redraw: () => chart.redraw(),
    measured: () => measured,
    destroy: () => chart.destroy(),
  };
}

/**
 * Perfect-move agreement of each measured generation's leader: the share of the run's solved
 * positions where its move is a perfect one, in percent, with its 95% band. Unmeasured
 * generations leave gaps.
 */
export function agreementChart(el) {
  const cols = [[], [], [], []]; // x, share, low, high
  const band = "rgba(44,160,44,0.15)";
  const opts = {
    class: "chart-agreement",
    series: [
      xSeries(),
      { label: "perfect moves %", stroke: PALETTE[2], width: 2.5, value: val(1), spanGaps: true },
      { label: "95% low", stroke: "rgba(44,160,44,0.35)", width: 1, value: val(1), spanGaps: true },
      { label: "95% high", stroke: "rgba(44,160,44,0.35)", width: 1, value: val(1), spanGaps: true },
    ],
    bands: [{ series: [3, 2], fill: band }],
    scales: { x: generationScale },
    axes: axes("perfect moves %"),
  };
  const chart = new LiveChart(el, opts, cols, 220);
  const pct = (v) => (v == null ? null : 100 * v);
  return {
    chart,
    push(g) {
      const a = g.panel?.agreement;
      cols[0].push(g.generation);
      cols[1].push(pct(a?.share));
      cols[2].push(pct(a?.share_ci?.[0]));
      cols[3].push(pct(a?.share_ci?.[1]));
    },
    redraw: () => chart.redraw(),
    destroy: () => chart.destroy(),
  };
}

/** Diversity of each generation. */
export function diversityChart(el) {
  const cols = [[], []];
  const opts = {
    series: [xSeries(), { label: "diversity", stroke: PALETTE[4], width: 2, fill: "rgba(148,103,189,0.12)", value: val(4) }],
    scales: { x: generationScale, y: { range: (u, lo, hi) => padRange(lo, hi, 0, null) } },
    axes: axes("diversity"),
  };
  const chart = new LiveChart(el, opts, cols, 180);
  return {
    chart,
    push(g) {
      cols[0].push(g.generation);
      cols[1].push(g.diversity ?? null);
    },
    redraw: () => chart.redraw(),
    destroy: () => chart.destroy(),
  };
}

/** The weights of each generation's best individual, one line per feature. */
export function weightsChart(el, features, onPick) {
  const cols = [[], ...features.map(() => [])];
  const opts = {
    series: [
      xSeries(),
      ...features.map((f, i) => ({ label: f, stroke: PALETTE[i % PALETTE.length], dash: seriesDash(i), width: 1.5, value: val(3) })),
    ],
    scales: { x: generationScale },
    axes: axes("weight"),
  };
  const chart = new LiveChart(el, opts, cols, 260);
  if (onPick) pickOnClick(chart, onPick);
  return {
    chart,
    push(g) {
      cols[0].push(g.generation);
      const w = g.best_weights || [];
      for (let i = 0; i < features.length; i++) cols[i + 1].push(w[i] ?? null);
    },
    redraw: () => chart.redraw(),
    destroy: () => chart.destroy(),
  };
}

// A click on the plot picks the generation under the cursor (to show its population).
function pickOnClick(chart, onPick) {
  chart.onOver("click", () => {
    const i = chart.plot.cursor.idx;
    if (i != null && chart.columns[0][i] != null) onPick(chart.columns[0][i]);
  });
}

/** A "log scale" checkbox for a chart whose values are positive. */
export function logToggle(chart, id) {
  const box = h("input", { type: "checkbox", id, onchange: (e) => chart.setLog(e.target.checked) });
  return h("label.inline.small", box, " log scale");
}

// Fitness lives in [0, 1]; keep that in view unless the data leave it.
function padRange(lo, hi, floor, ceil) {
  if (lo == null || hi == null) return [floor ?? 0, ceil ?? 1];
  let min = floor != null ? Math.min(lo, floor) : lo;
  let max = ceil != null ? Math.max(hi, ceil) : hi;
  if (floor != null && lo > floor && ceil == null) {
    const pad = (hi - lo) * 0.1 || Math.abs(hi) * 0.1 || 0.1;
    min = Math.max(floor, lo - pad);
    max = hi + pad;
  }
  if (min === max) max = min + 1;
  return [min, max];
}

/**
 * Several runs' curves on one chart, for comparing runs: `lines` are {label, xs, ys}, each
 * on its own generations; they are joined on the union of generations, gaps where a run has
 * no value.
 */
export function overlayChart(el, yLabel, lines) {
  const xs = [...new Set(lines.flatMap((l) => l.xs))].sort((a, b) => a - b);
  const at = new Map(xs.map((x, i) => [x, i]));
  const cols = [xs, ...lines.map((l) => {
    const col = new Array(xs.length).fill(null);
    l.xs.forEach((x, i) => (col[at.get(x)] = l.ys[i] ?? null));
    return col;
  })];
  const opts = {
    series: [xSeries(), ...lines.map((l, i) => ({ label: l.label, stroke: PALETTE[i % PALETTE.length], dash: seriesDash(i), width: 2, value: val(3), spanGaps: true }))],
    scales: { x: generationScale },
    axes: axes(yLabel),
    cursor: { drag: { x: true, y: false } },
  };
  const chart = new LiveChart(el, opts, cols, 280);
  // Keyed by run id (names may repeat), each run with its name and its points.
  if (lines.every((l) => l.id)) {
    chart.toJson = () =>
      JSON.stringify(
        {
          value: yLabel,
          runs: Object.fromEntries(lines.map((l) => [l.id, { name: l.name ?? null, label: l.label, points: l.xs.map((x, i) => ({ generation: x, value: l.ys[i] ?? null })) }])),
        },
        null,
        1,
      );
  }
  chart.redraw();
  return chart;
}

/**
 * Zooming one chart's generations zooms the others to the same generations (a drag on any
 * chart of a run, or a double-click to reset).
 */
export function linkZoom(charts) {
  let busy = false;
  for (const chart of charts) {
    chart.onZoom = (min, max) => {
      if (busy || min == null || max == null) return;
      busy = true;
      try {
        for (const other of charts) {
          const x = other.plot.scales.x;
          if (other !== chart && (x.min !== min || x.max !== max)) other.plot.setScale("x", { min, max });
        }
      } finally {
        busy = false;
      }
    };
  }
}

/**
 * An SPRT test's log-likelihood ratio after each batch of pairs, between its two bounds: the
 * test ends when the line leaves them (above: H1 accepted, below: H0).
 */
export function llrChart(el, lower, upper) {
  const cols = [[], [], [], []]; // pairs, llr, lower, upper
  const [xAxis, yAxis] = axes("LLR");
  const opts = {
    class: "chart-llr",
    series: [
      { label: "pairs", value: (u, v) => (v == null ? "–" : String(v)) },
      { label: "LLR", stroke: PALETTE[0], width: 2.5, value: val(3) },
      { label: "lower bound (H0)", stroke: PALETTE[3], width: 1.5, dash: [6, 4], value: val(3) },
      { label: "upper bound (H1)", stroke: PALETTE[2], width: 1.5, dash: [2, 3], value: val(3) },
    ],
    scales: { x: generationScale },
    axes: [{ ...xAxis, label: "pairs played" }, yAxis],
  };
  const chart = new LiveChart(el, opts, cols, 260);
  return {
    chart,
    /** The whole path again (the server sends it whole; it is a few hundred points at most). */
    set(history) {
      cols[0].length = cols[1].length = cols[2].length = cols[3].length = 0;
      for (const p of history) {
        cols[0].push(p.pairs);
        cols[1].push(p.llr);
        cols[2].push(lower);
        cols[3].push(upper);
      }
      chart.redraw();
    },
    destroy: () => chart.destroy(),
  };
}

/**
 * Ladder ratings over time: one line per player (`lines` are {label, points: [{at, elo}]}),
 * on the wall clock, joined on the union of times (the ladder writes every player's point
 * together).
 */
export function ratingChart(el, lines) {
  const times = [...new Set(lines.flatMap((l) => l.points.map((p) => p.at)))].sort();
  const at = new Map(times.map((t, i) => [t, i]));
  const cols = [
    times.map((t) => Date.parse(t) / 1000),
    ...lines.map((l) => {
      const col = new Array(times.length).fill(null);
      for (const p of l.points) col[at.get(p.at)] = p.elo;
      return col;
    }),
  ];
  const [, yAxis] = axes("Elo");
  const c = themeColors();
  const opts = {
    class: "chart-ladder",
    series: [
      { label: "time", value: (u, v) => (v == null ? "–" : new Date(v * 1000).toLocaleTimeString()) },
      ...lines.map((l, i) => ({ label: l.label, stroke: PALETTE[i % PALETTE.length], dash: seriesDash(i), width: 2, value: val(0), spanGaps: true })),
    ],
    scales: { x: { time: true } },
    axes: [{ stroke: c.fg, grid: { stroke: c.grid, width: 1 }, ticks: { stroke: c.grid, width: 1 }, label: "time" }, yAxis],
    cursor: { drag: { x: true, y: false } },
  };
  const chart = new LiveChart(el, opts, cols, 280);
  chart.redraw();
  return chart;
}
