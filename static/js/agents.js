// Agent picker shared by the play and tournament pages: the catalogue's examples, the best
// weights of every run with a generation (exports), or any spec typed by hand.

import { api } from "./api.js";
import { h, shortId, specLabel } from "./util.js";

let cached = null;
let cachedAt = 0;

/** The /api/agents catalogue, cached for a few seconds (exports change as runs progress). */
export async function catalogue() {
  if (cached && Date.now() - cachedAt < 5000) return cached;
  cached = await api.agents();
  cachedAt = Date.now();
  return cached;
}

/** Every ready-made choice as {label, spec, group}. */
export function choices(cat) {
  const out = [];
  for (const a of cat.agents || []) {
    const examples = a.examples && a.examples.length ? a.examples : [a.kind];
    for (const ex of examples) {
      // Placeholders such as "run:<id>" are documentation, not agents.
      if (typeof ex === "string" && ex.includes("<")) continue;
      out.push({ group: "Agents", label: specLabel(ex), spec: ex, title: a.description });
    }
  }
  const seen = new Set(out.map((c) => c.label));
  for (const w of cat.presets?.weights || []) {
    if (!w || typeof w.spec !== "string" || seen.has(w.spec)) continue;
    seen.add(w.spec);
    out.push({ group: "Published weights", label: w.spec, spec: w.spec, title: `${w.feature_set} ${w.name}` });
  }
  for (const e of cat.exports || []) {
    out.push({ group: "Exported runs", label: e.label || `run ${shortId(e.run_id)}`, spec: e.spec, runId: e.run_id });
  }
  return out;
}

/** Parses a hand-typed spec: JSON when it looks like JSON, else the short string form. */
export function parseSpec(text) {
  const t = text.trim();
  if (t.startsWith("{")) return JSON.parse(t);
  return t;
}

/**
 * A select of the catalogue plus a "custom" text field. `initial` is a spec string or a run
 * id (to preselect that run's export).
 */
export function agentPicker(cat, { id, initial, runId } = {}) {
  const list = choices(cat);
  const select = h("select", { id, class: "agent-select" });
  const groups = new Map();
  list.forEach((c, i) => {
    if (!groups.has(c.group)) groups.set(c.group, h("optgroup", { label: c.group }));
    groups.get(c.group).append(h("option", { value: String(i), title: c.title || null }, c.label));
  });
  select.append(...groups.values(), h("option", { value: "custom" }, "custom spec…"));
  const custom = h("input", {
    type: "text",
    id: id ? `${id}-custom` : null,
    class: "agent-custom",
    placeholder: 'minimax:6 or {"kind":"greedy"}',
    hidden: true,
  });
  select.addEventListener("change", () => (custom.hidden = select.value !== "custom"));

  let pick = -1;
  if (runId) pick = list.findIndex((c) => c.runId === runId);
  if (pick < 0 && initial) pick = list.findIndex((c) => c.label === initial || JSON.stringify(c.spec) === JSON.stringify(initial));
  if (pick >= 0) select.value = String(pick);
  else if (initial) {
    select.value = "custom";
    custom.value = typeof initial === "string" ? initial : JSON.stringify(initial);
    custom.hidden = false;
  }

  return {
    el: h("span.agent-picker", select, custom),
    select,
    /** The chosen spec; throws on malformed custom JSON. */
    get() {
      if (select.value === "custom") {
        const t = custom.value.trim();
        if (!t) throw new Error("type an agent spec, such as minimax:4");
        return parseSpec(t);
      }
      return list[Number(select.value)].spec;
    },
    label() {
      if (select.value === "custom") return custom.value.trim();
      return list[Number(select.value)].label;
    },
  };
}

/** A collapsible list of agent kinds with their parameters, for writing custom specs. */
export function agentHelp(cat) {
  return h(
    "details.agent-help",
    h("summary", "Agent kinds and parameters"),
    h(
      "dl",
      (cat.agents || []).flatMap((a) => [
        h("dt", h("code", a.kind)),
        h(
          "dd",
          a.description || "",
          a.params && a.params.length
            ? h(
                "div.small.muted",
                "params: ",
                a.params
                  .map((p) => `${p.name} (${p.type}${p.default != null ? `, default ${JSON.stringify(p.default)}` : ""}${p.min != null ? `, ${p.min}` : ""}${p.max != null ? ` to ${p.max}` : ""})`)
                  .join("; "),
              )
            : null,
          a.examples && a.examples.length ? h("div.small", "e.g. ", a.examples.map((e) => h("code", specLabel(e))).flatMap((c, i) => (i ? [", ", c] : [c]))) : null,
        ),
      ]),
    ),
  );
}
