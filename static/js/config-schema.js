// The GA config fields the form offers, with defaults and ranges mirroring src/ga/config.rs
// (GaConfig::default, GaConfig::preset, GaConfig::validate). The server stays the authority:
// the form sends only the fields that differ from the chosen preset, and the API's validation
// messages are shown next to the field they name.

export const BASE_DEFAULTS = {
  seed: 1,
  population: 20,
  generations: 75,
  features: "hunter10",
  depth: 4,
  elite: 1,
  "bounds.min": 0,
  "bounds.max": 1,
  "init.kind": "uniform",
  "init.weights": "",
  "init.sigma": 0.1,
  "selection.kind": "roulette",
  "selection.k": 3,
  "crossover.kind": "average-hybrid",
  "crossover.alpha": 0.5,
  "mutation.rate": 0.1,
  "mutation.sigma": 0.03,
  "fitness.mode": "round-robin",
  "fitness.games_per_pair": 2,
  "fitness.self_play": false,
  "fitness.opponents": [],
  "fitness.mixed_weight": 0.5,
  "fitness.opening_plies": 2,
  "board.pits": 6,
  "board.seeds": 4,
  rules: "standard",
  stagnation: null,
  target_fitness: null,
};

export const PRESETS = {
  "": { label: "none (defaults)", overrides: {} },
  abrams: {
    label: "abrams: the blog (pool 40, depth 7, 75 generations, abrams3)",
    overrides: { population: 40, generations: 75, depth: 7, features: "abrams3" },
  },
  hunter: {
    label: "hunter: Hunter's thesis (50, depth 4, 250 generations, hunter10, 5 + 5 games)",
    overrides: {
      population: 50,
      generations: 250,
      depth: 4,
      features: "hunter10",
      "fitness.games_per_pair": 10,
      "fitness.self_play": true,
    },
  },
};

export function presetDefaults(preset) {
  return { ...BASE_DEFAULTS, ...((PRESETS[preset] || PRESETS[""]).overrides) };
}

const MAX_WEIGHT = 1000;

// kind: int | real | select | bool | features | weights | opponents. `optional` fields may be
// left empty (not set). `range` is the text shown as the allowed range.
export const GROUPS = [
  {
    title: "Population and length",
    fields: [
      { key: "seed", kind: "int", min: 0, range: "0 or more", help: "The run is a pure function of its config and this seed." },
      { key: "population", kind: "int", min: 2, max: 1000, range: "2 to 1000" },
      { key: "generations", kind: "int", min: 1, max: 10000, range: "1 to 10000" },
      { key: "elite", kind: "int", min: 0, range: "0 to population − 1", help: "The best individuals passed on unchanged." },
      { key: "stagnation", kind: "int", min: 1, max: 10000, optional: true, range: "1 to 10000, or empty", help: "Stop after this many generations without a better hall of fame." },
      { key: "target_fitness", kind: "real", min: 0, max: 1, step: 0.01, optional: true, range: "0 to 1, or empty", help: "Stop once a generation's best reaches this." },
    ],
  },
  {
    title: "Players",
    fields: [
      { key: "features", kind: "features", range: "a named set, or names joined by +", help: "The evaluation features whose weights are evolved." },
      { key: "depth", kind: "int", min: 1, max: 10, range: "1 to 10", help: "Search depth of every individual, in turns." },
      { key: "bounds.min", kind: "real", min: -MAX_WEIGHT, max: MAX_WEIGHT, step: 0.1, range: "−1000 to 1000, below max" },
      { key: "bounds.max", kind: "real", min: -MAX_WEIGHT, max: MAX_WEIGHT, step: 0.1, range: "−1000 to 1000, above min" },
    ],
  },
  {
    title: "First generation",
    fields: [
      { key: "init.kind", kind: "select", options: ["uniform", "around"], range: "uniform or around" },
      { key: "init.weights", kind: "weights", range: "a preset name (published) or numbers", help: "Centre for \"around\"; one number per feature, comma-separated.", showIf: (v) => v["init.kind"] === "around" },
      { key: "init.sigma", kind: "real", min: 0, step: 0.01, range: "0 to bounds width", showIf: (v) => v["init.kind"] === "around" },
    ],
  },
  {
    title: "Breeding",
    fields: [
      { key: "selection.kind", kind: "select", options: ["roulette", "tournament", "rank", "sus"], range: "roulette, tournament, rank, sus" },
      { key: "selection.k", kind: "int", min: 1, range: "1 to population", showIf: (v) => v["selection.kind"] === "tournament" },
      { key: "crossover.kind", kind: "select", options: ["average-hybrid", "average", "hybrid", "uniform", "blend"], range: "average-hybrid, average, hybrid, uniform, blend" },
      { key: "crossover.alpha", kind: "real", min: 0, max: 2, step: 0.05, range: "0 to 2", showIf: (v) => v["crossover.kind"] === "blend" },
      { key: "mutation.rate", kind: "real", min: 0, max: 1, step: 0.01, range: "0 to 1", help: "Probability that a gene of a child mutates." },
      { key: "mutation.sigma", kind: "real", min: 0, step: 0.005, range: "0 to bounds width" },
    ],
  },
  {
    title: "Fitness",
    fields: [
      { key: "fitness.mode", kind: "select", options: ["round-robin", "opponents", "mixed"], range: "round-robin, opponents, mixed" },
      { key: "fitness.games_per_pair", kind: "int", min: 2, max: 1000, step: 2, range: "even, 2 to 1000" },
      { key: "fitness.self_play", kind: "bool", range: "", help: "Also count games against itself (Hunter)." },
      { key: "fitness.opponents", kind: "opponents", range: "up to 16 agent specs, one a line", help: "Such as minimax:4 or pekar.", showIf: (v) => v["fitness.mode"] !== "round-robin" },
      { key: "fitness.mixed_weight", kind: "real", min: 0, max: 1, step: 0.05, range: "0 to 1", showIf: (v) => v["fitness.mode"] === "mixed" },
      { key: "fitness.opening_plies", kind: "int", min: 0, max: 30, range: "0 to 30", help: "Random sowings shared by both games of a pair." },
    ],
  },
  {
    title: "Board and rules",
    fields: [
      { key: "board.pits", kind: "int", min: 1, max: 12, range: "1 to 12" },
      { key: "board.seeds", kind: "int", min: 1, range: "1 or more (1536 seeds at most)" },
      { key: "rules", kind: "select", options: ["standard", "empty-capture"], range: "standard or empty-capture" },
    ],
  },
];

export const FEATURE_SETS = ["hunter10", "abrams3", "divilly6"];

/** Sets a dotted key in a nested object: set(o, "fitness.mode", "mixed"). */
export function setPath(obj, key, value) {
  const parts = key.split(".");
  let o = obj;
  for (const p of parts.slice(0, -1)) o = o[p] ??= {};
  o[parts[parts.length - 1]] = value;
}

/** Same estimate as GaConfig::estimated_core_hours, for the form's hint. */
export function estimate(v) {
  const n = Number(v.population) || 0;
  const perPair = Number(v["fitness.games_per_pair"]) || 0;
  const opp = (v["fitness.opponents"] || []).length;
  const rr = ((n * (n - 1)) / 2) * perPair;
  const vsOpp = n * opp * perPair;
  const games = v["fitness.mode"] === "round-robin" ? rr : v["fitness.mode"] === "opponents" ? vsOpp : rr + vsOpp;
  const msPerGame = 3.5 * Math.pow(3, (Number(v.depth) || 4) - 4);
  const board = Math.max(1, ((Number(v["board.pits"]) || 6) * (Number(v["board.seeds"]) || 4)) / 24);
  const hours = (games * (Number(v.generations) || 0) * msPerGame * board) / 3.6e6;
  return { games, hours };
}
