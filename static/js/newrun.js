// New run form: a tuner (GA, CMA-ES, SPSA, DE, TD, TD-Leaf, Texel), a preset, then every config field of that
// tuner with its default and allowed range. The request carries only what differs from the
// preset; errors from the API land next to the field their `field` names (e.g.
// `config.population`).

import { api, getToken } from "./api.js";
import { loadSchema, presetDefaults, setPath } from "./config-schema.js";
import { flash, h, isLearner, shortId } from "./util.js";

/** What a number box holds when its text is not a number. */
const NOT_A_NUMBER = "(text that is not a number)";

export async function mount(view, { query }) {
  const schema = await loadSchema();
  const { tuners: TUNERS, feature_sets: FEATURE_SETS, feature_set_members: SET_MEMBERS } = schema;
  const controls = new Map(); // key -> {get, set, wrap, error, touched}
  const formError = h("div.form-error", { hidden: true });
  let tuner = query.get("tuner") ?? "ga";
  if (!(tuner in TUNERS)) tuner = "ga";
  let tunerForm = TUNERS[tuner];
  let preset = query.get("preset") ?? "";
  if (!(preset in tunerForm.presets)) preset = "";
  let defaults = presetDefaults(tunerForm, preset);

  const tunerSelect = h(
    "select",
    { id: "f-tuner", name: "tuner" },
    Object.entries(TUNERS).map(([k, t]) => h("option", { value: k, selected: k === tuner }, t.label)),
  );
  const presetSelect = h("select", { id: "f-preset", name: "preset" });
  const presetRange = h("span");
  // The field groups of the chosen tuner: built again when the tuner changes.
  const fieldsBox = h("div.tuner-fields");
  const nameInput = h("input", { id: "f-name", name: "name", type: "text", maxlength: 200, placeholder: "optional" });
  const estimateBox = h("p.hint.estimate");
  // Declared before anything calls changed(), which asks the server for an estimate.
  let estimateTimer = null;
  let estimateAsked = 0;

  const form = h(
    "form.config",
    { novalidate: true, onsubmit: submit, oninput: changed, onchange: changed },
    h(
      "fieldset.top",
      h("legend", "Run"),
      fieldWrap("tuner", "Tuner", tunerSelect, Object.keys(TUNERS).join(", "), "How the weights are found: evolved by a population (the genetic algorithm, CMA-ES, SPSA or differential evolution), learnt from self-play by TD(λ) or TD-Leaf(λ), or fitted to game results (Texel)."),
      fieldWrap("preset", "Preset", presetSelect, presetRange, "Starting values for every field below."),
      fieldWrap("name", "Name", nameInput, "optional", null),
    ),
    fieldsBox,
    estimateBox,
    formError,
    h(
      "div.actions",
      h("button.primary", { type: "submit", id: "start-run" }, "Start run"),
      h("button", { type: "button", onclick: () => resetAll(true) }, "Reset to preset"),
    ),
  );
  // A server with a token says so before the form is filled in, not on submit.
  const tokenNote = h("p.notice", { id: "token-note", hidden: true });
  view.append(h("section.card", h("h1", "New run"), tokenNote, form));
  api.checkToken(getToken()).then((answer) => {
    if (answer !== "refused") return;
    tokenNote.replaceChildren(
      getToken() ? "The server refuses the API token kept in this browser: " : "This server needs an API token to start runs: ",
      "set it under ",
      h("a", { href: "#/settings" }, "Settings"),
      ".",
    );
    tokenNote.hidden = false;
  });

  // Feature sets offered by the server's catalogue, if it lists more than the built-in ones
  // (a GA run takes a set by name; a learner needs its members, which the schema lists).
  let catalogue = null;
  function addCatalogueSets() {
    catalogue ??= api.agents().catch(() => null);
    catalogue.then((cat) => {
      const sets = cat?.presets?.feature_sets;
      if (!Array.isArray(sets)) return;
      const sel = controls.get("features")?.select;
      if (!sel || isLearner(tuner)) return;
      for (const s of sets) {
        const name = typeof s === "string" ? s : s?.name;
        if (name && ![...sel.options].some((o) => o.value === name)) {
          sel.insertBefore(h("option", { value: name }, name), sel.lastChild);
        }
      }
    });
  }

  presetSelect.addEventListener("change", () => {
    preset = presetSelect.value;
    defaults = presetDefaults(tunerForm, preset);
    resetAll(false);
  });
  tunerSelect.addEventListener("change", () => {
    chooseTuner(tunerSelect.value, "");
    resetAll(true);
  });
  chooseTuner(tuner, preset);
  resetAll(true);

  /** Shows the fields and presets of `name`'s form; the fields start again from its defaults. */
  function chooseTuner(name, presetName) {
    tuner = name in TUNERS ? name : "ga";
    tunerSelect.value = tuner;
    tunerForm = TUNERS[tuner];
    preset = presetName in tunerForm.presets ? presetName : "";
    presetSelect.replaceChildren(
      ...Object.entries(tunerForm.presets).map(([k, p]) => h("option", { value: k, selected: k === preset }, p.label)),
    );
    presetSelect.value = preset;
    const names = Object.keys(tunerForm.presets).filter(Boolean);
    presetRange.textContent = names.length ? `${names.join(", ")} or none` : "none for this tuner";
    defaults = presetDefaults(tunerForm, preset);
    for (const [key, c] of [...controls]) if (c.def) controls.delete(key);
    fieldsBox.replaceChildren(
      ...tunerForm.groups.map((g) => h("fieldset", h("legend", g.title), g.fields.map((f) => makeField(f)))),
    );
    if (TUNERS[tuner] && !isLearner(tuner)) addCatalogueSets();
  }
  const from = query.get("from");
  if (from) await copyRun(from);

  /**
   * Fills the form with a finished or running run's config ("New run from this config"):
   * every field it sets, as if typed, over the defaults.
   */
  async function copyRun(runId) {
    let source;
    try {
      source = await api.run(runId);
    } catch (e) {
      flash(`Cannot copy run ${runId}: ${e.message}`, "error");
      return;
    }
    if (source.tuner && !(source.tuner in TUNERS)) {
      flash(`Run ${source.name || runId} is a ${source.tuner} run, which this form cannot build.`, "error");
      return;
    }
    if ((source.tuner || "ga") !== tuner) {
      chooseTuner(source.tuner || "ga", "");
      resetAll(true);
    }
    const flat = {};
    const walk = (prefix, value) => {
      if (value && typeof value === "object" && !Array.isArray(value)) {
        for (const [k, v] of Object.entries(value)) walk(prefix ? `${prefix}.${k}` : k, v);
      } else flat[prefix] = value;
    };
    walk("", source.config || {});
    for (const [key, c] of controls) {
      if (!c.set || !(key in flat)) continue;
      // A GA's feature list is written as the form takes it: names joined by +.
      const value = c.def?.kind === "features" && Array.isArray(flat[key]) ? flat[key].join("+") : flat[key];
      c.set(value);
      c.touched = true;
    }
    nameInput.value = `${source.name || `run ${shortId(runId)}`} (copy)`;
    changed();
    flash(`The form holds the config of ${source.name || runId}; change what you like and start.`, "ok");
  }

  function fieldWrap(key, label, input, range, help) {
    const error = h("div.field-error", { id: `err-${key}`, dataset: { field: key } });
    const dflt = h("span.default");
    const wrap = h(
      "div.field",
      { dataset: { key } },
      h("label", { for: input.id }, label),
      input,
      h("div.hint", dflt, range ? h("span.range", range) : null),
      help ? h("div.hint", help) : null,
      error,
    );
    controls.set(key, { ...(controls.get(key) || {}), wrap, error, input, dflt });
    return wrap;
  }

  function makeField(f) {
    const id = `f-${f.key.replace(/\./g, "-")}`;
    let input;
    let get;
    let set;
    let extra = {};
    switch (f.kind) {
      case "int":
      case "real": {
        input = h("input", {
          id,
          name: f.key,
          type: "number",
          inputmode: f.kind === "int" ? "numeric" : "decimal",
          step: f.step ?? (f.kind === "int" ? 1 : "any"),
          min: f.min,
          max: f.max,
        });
        get = () => {
          // Text that is not a number reads as "" from a number box: say so, not "none".
          if (input.validity && input.validity.badInput) return NOT_A_NUMBER;
          const t = input.value.trim();
          if (t === "") return f.optional ? null : undefined;
          const x = Number(t);
          return Number.isFinite(x) ? x : t;
        };
        set = (v) => (input.value = v == null ? "" : String(v));
        break;
      }
      case "select":
        input = h("select", { id, name: f.key }, f.options.map((o) => h("option", { value: o }, o)));
        get = () => input.value;
        set = (v) => (input.value = v);
        break;
      case "bool":
        input = h("input", { id, name: f.key, type: "checkbox" });
        get = () => input.checked;
        set = (v) => (input.checked = !!v);
        break;
      case "features": {
        const select = h(
          "select",
          { id, name: f.key },
          FEATURE_SETS.map((s) => h("option", { value: s }, s)),
          h("option", { value: "custom" }, "custom…"),
        );
        const custom = h("input", { id: `${id}-custom`, type: "text", placeholder: "store_diff+side_diff+capturable_diff", hidden: true });
        select.addEventListener("change", () => (custom.hidden = select.value !== "custom"));
        input = select;
        extra = { select };
        get = () => (select.value === "custom" ? custom.value.trim() : select.value);
        set = (v) => {
          if ([...select.options].some((o) => o.value === v)) {
            select.value = v;
            custom.hidden = true;
          } else {
            select.value = "custom";
            custom.value = v;
            custom.hidden = false;
          }
        };
        const wrap = fieldWrap(f.key, f.key, select, f.range, f.help);
        wrap.insertBefore(custom, select.nextSibling);
        return finish(wrap);
      }
      case "feature_list": {
        // A learner takes the features themselves: a named set stands for its members.
        const select = h(
          "select",
          { id, name: f.key },
          Object.keys(SET_MEMBERS).map((s) => h("option", { value: s }, s)),
          h("option", { value: "custom" }, "custom…"),
        );
        const custom = h("input", { id: `${id}-custom`, type: "text", placeholder: "store_diff+side_diff+capturable_diff", hidden: true });
        input = select;
        extra = { select };
        get = () =>
          select.value === "custom"
            ? custom.value.split(/[\s+,]+/).filter(Boolean)
            : [...(SET_MEMBERS[select.value]?.features || [])];
        set = (v) => {
          const names = Array.isArray(v) ? v : String(v ?? "").split(/[\s+,]+/).filter(Boolean);
          const same = Object.entries(SET_MEMBERS).find(([, m]) => JSON.stringify(m.features) === JSON.stringify(names));
          select.value = same ? same[0] : "custom";
          custom.value = same ? "" : names.join("+");
          custom.hidden = !!same;
        };
        select.addEventListener("change", () => {
          custom.hidden = select.value !== "custom";
          // Starting weights follow the set while the user has not written their own.
          const initial = controls.get("initial");
          const members = SET_MEMBERS[select.value];
          if (initial && !initial.touched && members) initial.set(members.published);
        });
        const wrap = fieldWrap(f.key, f.key, select, f.range, f.help);
        wrap.insertBefore(custom, select.nextSibling);
        return finish(wrap);
      }
      case "agent":
        input = h("input", { id, name: f.key, type: "text", placeholder: "heuristic:hunter10:published:4" });
        get = () => {
          const t = input.value.trim();
          if (t.startsWith("{")) {
            try {
              return JSON.parse(t);
            } catch {
              return t;
            }
          }
          return t;
        };
        set = (v) => (input.value = v == null ? "" : typeof v === "string" ? v : JSON.stringify(v));
        break;
      case "weights":
        input = h("input", { id, name: f.key, type: "text", placeholder: "published or 0.5, 0.4, 0.3" });
        get = () => {
          const t = input.value.trim();
          if (t === "") return null;
          const parts = t.split(/[\s,/]+/).filter(Boolean);
          const nums = parts.map(Number);
          return parts.length && nums.every(Number.isFinite) ? nums : t;
        };
        set = (v) => (input.value = v == null ? "" : Array.isArray(v) ? v.join(", ") : String(v));
        break;
      case "opponents":
        input = h("textarea", { id, name: f.key, rows: 3, placeholder: "minimax:4\npekar" });
        get = () =>
          input.value
            .split("\n")
            .map((s) => s.trim())
            .filter(Boolean)
            .map((s) => {
              if (s.startsWith("{")) {
                try {
                  return JSON.parse(s);
                } catch {
                  return s;
                }
              }
              return s;
            });
        set = (v) => (input.value = (v || []).map((s) => (typeof s === "string" ? s : JSON.stringify(s))).join("\n"));
        break;
      default:
        throw new Error(`unknown field kind ${f.kind}`);
    }
    return finish(fieldWrap(f.key, f.key, input, f.range, f.help));

    function finish(wrap) {
      const c = controls.get(f.key);
      Object.assign(c, { get, set, def: f, touched: false, ...extra });
      const markTouched = () => (c.touched = true);
      wrap.addEventListener("input", markTouched);
      wrap.addEventListener("change", markTouched);
      return wrap;
    }
  }

  function values() {
    const v = {};
    for (const [key, c] of controls) if (c.get) v[key] = c.get();
    return v;
  }

  function resetAll(all) {
    for (const [key, c] of controls) {
      if (!c.set) continue;
      // Fields the user edited keep their value when only the preset changes.
      const d = defaults[key];
      const text = (x) => (x && typeof x === "object" ? JSON.stringify(x) : String(x));
      // A switch is on or off (a learner's config leaves out a switch that is off).
      const shown =
        c.def?.kind === "bool" ? (d === true ? "on" : "off") : d == null || (Array.isArray(d) && !d.length) ? "none" : Array.isArray(d) ? d.map(text).join(", ") : text(d);
      c.dflt.textContent = `default ${shown} · `;
      if (all || !c.touched) {
        c.set(defaults[key]);
        if (all) c.touched = false;
      }
    }
    clearErrors();
    changed();
  }

  function changed(e) {
    const v = values();
    for (const [, c] of controls) {
      if (c.def?.showIf) c.wrap.hidden = !c.def.showIf(v);
    }
    // A field left with a bad value says so at once (on change, not at every key).
    const key = e && e.type === "change" ? e.target?.closest?.(".field")?.dataset?.key : null;
    const c = key && controls.get(key);
    if (c) {
      const err = checkFields(v).find((x) => x.field === key);
      if (err) showError(err, false);
      else if (c.wrap.classList.contains("invalid")) {
        c.error.textContent = "";
        c.wrap.classList.remove("invalid");
        c.input?.removeAttribute("aria-invalid");
        c.input?.removeAttribute("aria-describedby");
      }
    }
    // An estimate of a config that does not check out would be nonsense ("-0 games"): the
    // box says why there is none instead.
    const problems = checkFields(v);
    if (problems.length) {
      clearTimeout(estimateTimer);
      estimateAsked++;
      estimateBox.textContent = `No estimate: ${problems[0].message}${problems.length > 1 ? ` (and ${problems.length - 1} more)` : ""}.`;
      return;
    }
    askEstimate(requestBody(v));
  }

  // The server estimates (POST /api/runs/estimate, its one cost model): asked a moment after
  // the last change, and only the newest answer is shown (`estimateTimer`, `estimateAsked`).
  function askEstimate(body) {
    clearTimeout(estimateTimer);
    const asked = ++estimateAsked;
    estimateTimer = setTimeout(async () => {
      try {
        const e = await api.estimateRun(body);
        if (asked !== estimateAsked) return;
        estimateBox.textContent = describeEstimate(e);
      } catch (err) {
        if (asked !== estimateAsked) return;
        // A read-only visitor is not shown the server's refusal as a fault of the config.
        estimateBox.textContent =
          err.status === 401
            ? "No estimate: the server gives one only with its API token (see Settings)."
            : err.field
              ? `No estimate, not a valid run: ${err.message}`
              : "";
      }
    }, 250);
  }

  function describeEstimate(e) {
    const hours = e.estimated_core_hours;
    const minutes = hours * 60;
    const cost =
      minutes < 1 ? "under a minute" : minutes < 90 ? `about ${Math.round(minutes).toLocaleString()} minutes` : `about ${hours.toLocaleString(undefined, { maximumFractionDigits: 1 })} hours`;
    const units = TUNERS[e.tuner]?.unit || (e.tuner === "ga" ? "generations" : "checkpoints");
    const unit = e.records === 1 ? units.replace(/s$/, "") : units;
    const mb = e.estimated_storage_bytes / 1e6;
    const storage = mb < 1 ? "under 1 MB" : `about ${mb.toLocaleString(undefined, { maximumFractionDigits: 0 })} MB`;
    return `${e.records.toLocaleString()} ${unit}; ${cost} of processor time on one core (a rough estimate; the server refuses more than ${e.max_core_hours.toLocaleString()} hours); records ${storage}.`;
  }

  /** The request a submit sends: the fields that differ from the preset's defaults. */
  function requestBody(v) {
    const config = {};
    for (const [key, c] of controls) {
      if (!c.get) continue;
      const val = v[key];
      if (JSON.stringify(val) !== JSON.stringify(defaults[key] ?? null)) setPath(config, key, val);
    }
    const body = { config };
    if (tuner !== "ga") body.tuner = tuner;
    if (preset) body.preset = preset;
    const name = nameInput.value.trim();
    if (name) body.name = name;
    return body;
  }

  function clearErrors() {
    formError.hidden = true;
    formError.textContent = "";
    for (const [, c] of controls) {
      c.error.textContent = "";
      c.wrap.classList.remove("invalid");
      c.input?.removeAttribute("aria-invalid");
      c.input?.removeAttribute("aria-describedby");
    }
  }

  /**
   * Every field the schema can check on its own (numbers: whole, within range; required
   * fields), all at once: the server stops at the first bad field it meets.
   */
  function checkFields(v) {
    const errors = [];
    for (const [key, c] of controls) {
      const f = c.def;
      if (!c.get || !f || c.wrap.hidden) continue;
      const x = v[key];
      if (x === undefined) {
        errors.push({ field: key, message: `${key}: required` });
        continue;
      }
      if ((f.kind !== "int" && f.kind !== "real") || x === null) continue;
      if (x === NOT_A_NUMBER) errors.push({ field: key, message: `${key}: must be a number` });
      else if (typeof x !== "number") errors.push({ field: key, message: `${key}: must be a number, got ${JSON.stringify(x)}` });
      else if (f.kind === "int" && !Number.isInteger(x)) errors.push({ field: key, message: `${key}: must be a whole number, got ${x}` });
      else if ((f.min != null && x < f.min) || (f.max != null && x > f.max)) {
        const range = f.max != null ? `${f.min} to ${f.max}` : `at least ${f.min}`;
        errors.push({ field: key, message: `${key}: must be ${range}, got ${x}` });
      }
    }
    // Rules between two fields, which the server checks too: said here with the others.
    const shown = (key) => controls.get(key) && !controls.get(key).wrap.hidden && !errors.some((e) => e.field === key);
    const num = (key) => (typeof v[key] === "number" ? v[key] : null);
    if (shown("elite") && shown("population") && num("elite") != null && num("population") != null && num("elite") >= num("population")) {
      errors.push({ field: "elite", message: `elite: must be below the population (${num("population")}), got ${num("elite")}` });
    }
    if (shown("bounds.min") && shown("bounds.max") && num("bounds.min") != null && num("bounds.max") != null && num("bounds.min") >= num("bounds.max")) {
      errors.push({ field: "bounds.max", message: `bounds.max: must be above bounds.min (${num("bounds.min")}), got ${num("bounds.max")}` });
    }
    return errors;
  }

  function showErrors(errors) {
    errors.forEach((err, i) => showError(err, i === 0));
  }

  function showError(err, first = true) {
    const key = fieldKey(err.field);
    const c = key && controls.get(key);
    if (c) {
      c.error.textContent = err.message;
      c.wrap.classList.add("invalid");
      c.wrap.hidden = false;
      c.input?.setAttribute("aria-invalid", "true");
      // A screen reader reads the message with the field.
      c.input?.setAttribute("aria-describedby", c.error.id);
      if (first) {
        c.input?.focus({ preventScroll: true });
        c.wrap.scrollIntoView({ block: "center", behavior: "smooth" });
      }
    } else {
      // The server's message already starts with its field.
      formError.textContent = err.message;
      formError.hidden = false;
    }
  }

  // Maps the API's field path to a form field: "config.fitness.opponents[1]" ->
  // "fitness.opponents", "config.bounds" -> "bounds.min"; also accepts paths without the
  // "config." prefix.
  function fieldKey(field) {
    if (!field) return null;
    let f = String(field).replace(/\[\d+\]/g, "");
    const candidates = [f, f.replace(/^config\./, "")];
    for (const k of candidates) {
      if (controls.has(k)) return k;
      if (k === "bounds") return "bounds.min";
      if (k === "board") return "board.pits";
      if (k === "init") return "init.kind";
      // A nested path below a known field (e.g. init.weights.0).
      const parent = [...controls.keys()].find((c) => k.startsWith(c + "."));
      if (parent) return parent;
    }
    return null;
  }

  async function submit(e) {
    e.preventDefault();
    clearErrors();
    const v = values();
    const errors = checkFields(v);
    if (errors.length) {
      showErrors(errors);
      flash(`${errors.length} field${errors.length === 1 ? "" : "s"} to correct.`, "error");
      return;
    }
    const body = requestBody(v);
    const button = form.querySelector("#start-run");
    button.disabled = true;
    try {
      const run = await api.createRun(body);
      flash("Run created.", "ok");
      location.hash = `#/runs/${encodeURIComponent(run.id)}`;
    } catch (err) {
      showError(err);
      if (!err.field) flash(err.message, "error");
    } finally {
      button.disabled = false;
    }
  }
}
