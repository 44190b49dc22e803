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

/** One side of a game by a search at `depth`, in ms (agents::limits::search_side_ms). */
const searchSideMs = (depth) => 1.75 * Math.pow(3, depth - 4);

/**
 * One side of a game by an opponent, in ms, from its spec: the server's measured table
 * (agents::limits::game_side_ms), for the short specs the form takes; anything else is
 * counted as a depth-4 search. The server's estimate, which also counts the panel, decides.
 */
function opponentSideMs(spec) {
  const text = typeof spec === "string" ? spec.trim() : String(spec?.kind || "");
  const [kind, first] = text.split(":");
  const num = Number(first);
  switch (kind) {
    case "random":
    case "greedy":
    case "pekar":
      return 0.05;
    case "a3c":
      return 0.2;
    case "mcts":
      return (Number.isFinite(num) && num > 0 ? num : 4000) * 0.04;
    case "perfect":
      return 21 + searchSideMs(4);
    case "minimax":
    case "pekar-minimax":
      return searchSideMs(Number.isFinite(num) && num > 0 ? num : 4);
    case "heuristic": {
      const depth = Number(text.split(":").pop());
      return searchSideMs(Number.isFinite(depth) && depth > 0 ? depth : 4);
    }
    default:
      return searchSideMs(4);
  }
}

/** The estimate of GaConfig::estimated_core_hours without the panel, for the form's hint. */
export function estimate(v) {
  const n = Number(v.population) || 0;
  const perPair = Number(v["fitness.games_per_pair"]) || 0;
  const opponents = v["fitness.opponents"] || [];
  const rr = ((n * (n - 1)) / 2) * perPair;
  const vsOpp = n * opponents.length * perPair;
  const mode = v["fitness.mode"];
  const games = mode === "round-robin" ? rr : mode === "opponents" ? vsOpp : rr + vsOpp;
  const me = searchSideMs(Number(v.depth) || 4);
  const rrMs = rr * 2 * me;
  const oppMs = opponents.reduce((sum, o) => sum + n * perPair * (me + opponentSideMs(o)), 0);
  const ms = mode === "round-robin" ? rrMs : mode === "opponents" ? oppMs : rrMs + oppMs;
  const board = Math.max(1, ((Number(v["board.pits"]) || 6) * (Number(v["board.seeds"]) || 4)) / 24);
  const hours = (ms * (Number(v.generations) || 0) * board) / 3.6e6;
  return { games, hours };
}
