// The GA config form's schema comes from the server (GET /api/config-schema, built from
// src/ga/schema.rs with the same constants GaConfig::validate checks), so no default, preset or
// range is copied here. The server stays the authority: the form sends only the fields that
// differ from the chosen preset, and the API's validation messages are shown next to the field
// they name.

import { api } from "./api.js";

/** The schema: { defaults, presets: {name: {label, overrides}}, groups, feature_sets, max_core_hours }. */
export async function loadSchema() {
  const schema = await api.configSchema();
  for (const group of schema.groups) {
    for (const field of group.fields) {
      const rule = field.show_if;
      if (rule) {
        field.showIf = (v) =>
          rule.is ? rule.is.includes(v[rule.key]) : !(rule.is_not || []).includes(v[rule.key]);
      }
    }
  }
  return schema;
}

/** The form's starting values under a preset: the defaults with the preset's overrides. */
export function presetDefaults(schema, preset) {
  const overrides = (schema.presets[preset] || schema.presets[""] || { overrides: {} }).overrides;
  return { ...schema.defaults, ...overrides };
}

/** Sets a dotted key in a nested object: set(o, "fitness.mode", "mixed"). */
export function setPath(obj, key, value) {
  const parts = key.split(".");
  let o = obj;
  for (const p of parts.slice(0, -1)) o = o[p] ??= {};
  o[parts[parts.length - 1]] = value;
}
