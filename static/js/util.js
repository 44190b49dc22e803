// Small DOM and formatting helpers shared by the pages.

/**
 * Creates an element: h("a.button", {href: "#/"}, "text", child). Attributes starting with
 * "on" become listeners; `dataset` and `style` objects are assigned; false/null attributes
 * are left out.
 */
export function h(tag, attrs, ...children) {
  const [name, ...classes] = tag.split(".");
  const el = document.createElement(name || "div");
  if (classes.length) el.className = classes.join(" ");
  // A first argument that is not an attribute object is a child (0 and "" included).
  if (attrs != null && (typeof attrs !== "object" || attrs instanceof Node || Array.isArray(attrs))) {
    children.unshift(attrs);
    attrs = null;
  }
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v == null || v === false) continue;
    if (k.startsWith("on") && typeof v === "function") el.addEventListener(k.slice(2), v);
    else if (k === "dataset") Object.assign(el.dataset, v);
    else if (k === "style" && typeof v === "object") {
      // Custom properties (--x) only take effect through setProperty.
      for (const [prop, val] of Object.entries(v)) {
        if (prop.startsWith("--")) el.style.setProperty(prop, String(val));
        else el.style[prop] = val;
      }
    }
    else if (k === "class") el.className += (el.className ? " " : "") + v;
    else if (k in el && typeof v !== "string") el[k] = v;
    else el.setAttribute(k, v === true ? "" : v);
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c == null || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : String(c));
  }
}

export function clear(el) {
  el.replaceChildren();
  return el;
}

export function fmtNum(x, digits = 3) {
  if (x == null || Number.isNaN(x)) return "–";
  if (typeof x !== "number") return String(x);
  if (Number.isInteger(x)) return String(x);
  return x.toFixed(digits);
}

export function fmtPct(x, digits = 1) {
  if (x == null || Number.isNaN(x)) return "–";
  return (x * 100).toFixed(digits) + "%";
}

export function fmtTime(iso) {
  if (!iso) return "–";
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const now = new Date();
  const sameDay = d.toDateString() === now.toDateString();
  return sameDay
    ? d.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit" })
    : d.toLocaleString([], { dateStyle: "short", timeStyle: "short" });
}

export function fmtDuration(ms) {
  if (ms == null || ms < 0) return "–";
  // Under a second in milliseconds: "132 games in 0 s" says nothing.
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 10000) return `${(ms / 1000).toFixed(1)} s`;
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${s % 60} s`;
  return `${Math.floor(m / 60)} h ${m % 60} min`;
}

/**
 * Eight characters that tell runs apart: the random tail of the id. (A UUIDv7 starts with its
 * creation time, so the first eight characters are the same for runs created within a minute.)
 */
export function shortId(id) {
  if (!id) return "";
  const hex = String(id).replace(/-/g, "");
  return hex.length >= 8 ? hex.slice(-8) : String(id);
}

let flashTimer = null;
/** A message at the top of the page; errors stay until the next message or navigation. */
export function flash(message, kind = "info") {
  const box = document.getElementById("flash");
  if (!box) return;
  clearTimeout(flashTimer);
  box.className = message ? `show ${kind}` : "";
  box.textContent = message || "";
  if (message && kind !== "error") flashTimer = setTimeout(() => flash(""), 4000);
}

/**
 * Takes down the banner if it still shows a message starting with `prefix` (any error banner
 * when none is given): what it said is no longer so.
 */
export function clearFlash(prefix = null) {
  const box = document.getElementById("flash");
  if (!box || !box.textContent) return;
  if (prefix == null ? box.classList.contains("error") : box.textContent.startsWith(prefix)) flash("");
}

/** A label for an agent spec given as a string or as JSON. */
export function specLabel(spec) {
  if (typeof spec === "string") return spec;
  if (spec && typeof spec === "object") {
    if (spec.label) return spec.label;
    if (spec.kind === "run" && spec.id) return `run ${shortId(spec.id)}`;
    if (spec.from_export) return "export";
    return spec.kind || JSON.stringify(spec);
  }
  return String(spec);
}

/** Calls `fn` at most once per animation frame, with the latest arguments. */
export function rafThrottle(fn) {
  let queued = false;
  let args = [];
  return (...a) => {
    args = a;
    if (queued) return;
    queued = true;
    requestAnimationFrame(() => {
      queued = false;
      fn(...args);
    });
  };
}

export function statusBadge(status) {
  return h(`span.badge.status-${status || "unknown"}`, status || "unknown");
}

/**
 * Colours for chart series: each at least 3:1 against the cards and pages of both themes
 * (WCAG's contrast for graphics), so one palette serves light and dark.
 */
export const PALETTE = [
  "#1f77b4", "#d62728", "#2ca02c", "#c75d00", "#9467bd",
  "#a96c5f", "#d63aa7", "#118995", "#7f8017", "#7f7f7f",
  "#7375bd", "#bc6162", "#637939", "#9e7516", "#ac62a2", "#3182bd",
];

/** A series' line pattern: past the palette's colours lines differ by dashes as well. */
export function seriesDash(i) {
  const round = Math.floor(i / PALETTE.length);
  return round === 0 ? undefined : round === 1 ? [8, 4] : [2, 3];
}

// The tuners a run may use, as the dashboard names them, and the learners among them (whose
// records are checkpoints of one learnt player, not generations of a population). Both come
// from the server's config schema when the dashboard starts (setTuners), so that a tuner the
// server registers needs no change here.
export const TUNER_NAMES = {};
const LEARNERS = new Set();
export const isLearner = (tuner) => LEARNERS.has(tuner);

/** Takes the tuners' names and record units from the config schema's forms. */
export function setTuners(forms) {
  for (const [tuner, form] of Object.entries(forms || {})) {
    TUNER_NAMES[tuner] = form.name || tuner;
    if (form.unit === "checkpoints") LEARNERS.add(tuner);
  }
}
