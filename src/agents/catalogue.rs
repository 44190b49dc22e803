//! The agent catalogue: every kind of agent with its parameters, their defaults and their
//! ranges under a [`Profile`], and the feature sets and weight presets a heuristic can name.
//! The server serves it (`GET /api/agents`) and the dashboard builds its agent pickers from
//! it, so no default or range is copied by hand.

use serde_json::{json, Value};

use super::limits::{Profile, MAX_MCTS_C, MAX_SOLVE_NODES};
use super::mcts::{DEFAULT_C, DEFAULT_EPSILON, DEFAULT_ITERATIONS};
use super::spec::{default_depth, default_fallback_depth, default_max_seeds};
use crate::eval::FEATURE_SETS;
use crate::search::Depth;

fn param(name: &str, ty: &str, default: Value, min: Value, max: Value, help: &str) -> Value {
    json!({"name": name, "type": ty, "default": default, "min": min, "max": max, "description": help})
}

/// The kinds of agent with their parameters, ranges read from `profile`'s limits.
pub(crate) fn kinds(profile: Profile) -> Value {
    let limits = profile.limits();
    let depth = |d: Depth| {
        param(
            "depth",
            "integer",
            json!(d),
            json!(1),
            json!(limits.max_depth),
            "search depth in turns (an extra turn does not use depth), or \"adaptive\": Ahmed's depth by the number of legal moves (6 to 8)",
        )
    };
    let time = param(
        "time_ms",
        "integer",
        Value::Null,
        json!(1),
        json!(limits.max_time_ms),
        "iterative deepening within this many milliseconds per move, up to depth",
    );
    let nodes = param(
        "nodes",
        "integer",
        Value::Null,
        json!(1),
        json!(limits.max_move_nodes),
        "iterative deepening up to depth until a move's search has visited this many positions (reproducible, unlike time_ms; not with time_ms)",
    );
    let egdb = json!({"name": "egdb", "type": "boolean", "default": false, "description": "read exact values from the endgame database built for the board (kalah-tuner egdb build) wherever it covers a position"});
    let ties = json!({"name": "ties", "type": "string", "default": "random", "enum": ["random", "first"], "description": "how to choose among equally good moves"});
    json!([
        {"kind": "random", "description": "uniform over legal moves", "params": [], "examples": ["random"]},
        {"kind": "greedy", "description": "the move, with chained extra turns, that puts most seeds in its store now", "params": [ties], "examples": ["greedy"]},
        {"kind": "minimax", "description": "alpha-beta on the store difference", "params": [depth(default_depth()), time, nodes.clone(), ties, egdb], "examples": ["minimax:4", "minimax:8", "minimax:adaptive"]},
        {"kind": "heuristic", "description": "alpha-beta on a weighted sum of evaluation features", "params": [
            {"name": "features", "type": "string|array", "default": "hunter10", "enum": FEATURE_SETS.iter().map(|s| s.name).collect::<Vec<_>>(), "description": "a feature set or a list of feature names"},
            {"name": "weights", "type": "string|array", "default": "published", "description": "a preset of the feature set or one number per feature"},
            depth(default_depth()), time, nodes, ties, egdb,
            {"name": "from_export", "type": "object", "default": null, "description": "an export document; plays as its evolved individual"}
        ], "examples": ["heuristic:hunter10:published:4", "heuristic:abrams3:0.58,0.44,0.28:7"]},
        {"kind": "pekar", "description": "Pekar et al.'s rule list", "params": [ties], "examples": ["pekar"]},
        {"kind": "pekar-minimax", "description": "Pekar et al.'s modified minimax with cost function (4)", "params": [depth(default_depth()), ties], "examples": ["pekar-minimax:4"]},
        {"kind": "perfect", "description": "exact play from the solver with few seeds left, a store-difference search above that", "params": [
            param("max_seeds", "integer", json!(default_max_seeds()), json!(0), json!(limits.max_perfect_seeds), "solve exactly with at most this many seeds in the pits"),
            param("fallback_depth", "integer", json!(default_fallback_depth()), json!(1), json!(limits.max_depth), "store-difference search depth where no exact answer is found"),
            param("solve_nodes", "integer", json!(0), json!(0), json!(limits.max_move_nodes.min(MAX_SOLVE_NODES)), "above max_seeds, try an exact solve of at most this many positions per move (0: never)"),
            ties, egdb
        ], "examples": ["perfect:16", "{\"kind\": \"perfect\", \"egdb\": true, \"solve_nodes\": 2000000}"]},
        {"kind": "mcts", "description": "UCT Monte Carlo tree search with epsilon-greedy playouts; plays the most visited move", "params": [
            param("iterations", "integer", json!(DEFAULT_ITERATIONS), json!(1), json!(limits.max_mcts_iterations), "playouts per move"),
            param("c", "number", json!(DEFAULT_C), json!(0), json!(MAX_MCTS_C), "UCT exploration constant"),
            param("epsilon", "number", json!(DEFAULT_EPSILON), json!(0), json!(1), "chance of a random playout move instead of the greedy one"),
            time,
            {"name": "reuse", "type": "boolean", "default": false, "description": "keep the subtree between moves"},
            ties
        ], "examples": ["mcts:4000", "mcts:1000"]},
        {"kind": "a3c", "description": "the policy network trained by asynchronous advantage actor-critic (the embedded Kalah(6,4) model)", "params": [
            {"name": "sample", "type": "boolean", "default": false, "description": "sample from the policy instead of playing its most likely move"},
            ties
        ], "examples": ["a3c"]}
    ])
}

/// The feature sets and the published weight presets of each.
pub(crate) fn presets() -> Value {
    let feature_sets: Vec<Value> = FEATURE_SETS
        .iter()
        .map(|s| {
            json!({
                "name": s.name,
                "features": s.features.iter().map(|f| f.name()).collect::<Vec<_>>(),
                "source": s.source,
            })
        })
        .collect();
    let weights: Vec<Value> = FEATURE_SETS
        .iter()
        .flat_map(|s| {
            s.presets.iter().map(move |(name, w)| {
                json!({"feature_set": s.name, "name": name, "weights": w,
                       "spec": format!("heuristic:{}:{}:4", s.name, name)})
            })
        })
        .collect();
    json!({"feature_sets": feature_sets, "weights": weights})
}
