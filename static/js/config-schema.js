// The GA config form's schema comes from the server (GET /api/config-schema, built from
// src/ga/schema.rs with the same constants GaConfig::validate checks), so no default, preset or
// range is copied here. The server stays the authority: the form sends only the fields that
// differ from the chosen preset, and the API's validation messages are shown next to the field
// they name.

import { api } from "./api.js";

/**
 * The schema: { tuners: {ga|td|td-leaf|texel: {label, unit, defaults, presets: {name: {label,
 * overrides}}, groups}}, feature_sets, feature_set_members, max_core_hours }, with the GA's
 * form also at the top (defaults, presets, groups).
 */
export async function loadSchema() {
  const schema = await api.configSchema();
  // A server from before the other tuners has only the GA's form, at the top.
  schema.tuners ??= { ga: { label: "GA", unit: "generations", defaults: schema.defaults, presets: schema.presets, groups: schema.groups } };
  schema.feature_set_members ??= {};
  for (const form of Object.values(schema.tuners)) {
    for (const group of form.groups) {
      for (const field of group.fields) {
        const rule = field.show_if;
        if (rule) {
          field.showIf = (v) =>
            rule.is ? rule.is.includes(v[rule.key]) : !(rule.is_not || []).includes(v[rule.key]);
        }
      }
    }
  }
  return schema;
}

/** The form's starting values under a preset: the defaults with the preset's overrides. */
export function presetDefaults(form, preset) {
  const overrides = (form.presets[preset] || form.presets[""] || { overrides: {} }).overrides;
  return { ...form.defaults, ...overrides };
}

/** Sets a dotted key in a nested object: set(o, "fitness.mode", "mixed"). */
export function setPath(obj, key, value) {
  const parts = key.split(".");
  let o = obj;
  for (const p of parts.slice(0, -1)) o = o[p] ??= {};
  o[parts[parts.length - 1]] = value;
}
