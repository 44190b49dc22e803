//! The OpenAPI 3.0 document of every route, written by hand as JSON: the API is small, and a
//! plain document keeps the handlers free of annotation macros. A test checks that every
//! route of the router appears here.

use axum::Json;
use serde_json::{json, Map, Value};

use super::matches::{MAX_MATCH_GAMES, MAX_SPRT_PAIRS};
use super::tournaments::{MAX_TOURNAMENT_AGENTS, MAX_TOURNAMENT_GAMES};
use super::MAX_BODY_BYTES;
use crate::agents::Profile;

pub async fn document() -> Json<Value> {
    Json(spec())
}

fn schema_ref(name: &str) -> Value {
    json!({"$ref": format!("#/components/schemas/{name}")})
}

fn ok(description: &str, schema: Value) -> Value {
    json!({"description": description, "content": {"application/json": {"schema": schema}}})
}

fn error_responses(codes: &[u16]) -> Map<String, Value> {
    codes
        .iter()
        .map(|c| {
            let text = match c {
                400 => "malformed JSON or a body that is not an object",
                401 => "missing or wrong bearer token (when KALAH_TUNER_TOKEN is set)",
                404 => "unknown id",
                409 => "the run is not in a state that allows this",
                413 => "request body too large",
                422 => "an invalid field; `field` names it",
                429 => "too many queued runs or tournaments",
                _ => "error",
            };
            (c.to_string(), ok(text, schema_ref("Error")))
        })
        .collect()
}

fn op(summary: &str, responses: Vec<(&str, Value)>, errors: &[u16]) -> Value {
    let mut map: Map<String, Value> = responses
        .into_iter()
        .map(|(c, v)| (c.to_string(), v))
        .collect();
    map.extend(error_responses(errors));
    json!({"summary": summary, "responses": map})
}

/// A JSON request body; any other content type is answered 415.
fn with_body(mut operation: Value, schema: Value) -> Value {
    operation["requestBody"] =
        json!({"required": true, "content": {"application/json": {"schema": schema}}});
    operation["responses"]["415"] = ok(
        "the body was not sent as Content-Type: application/json",
        schema_ref("Error"),
    );
    operation
}

fn with_params(mut operation: Value, params: Value) -> Value {
    operation["parameters"] = params;
    operation
}

/// A route that changes state: it needs the token when one is set (401), and refuses requests
/// from other sites' pages (403, see docs/server.md#cross-site-requests).
fn secured(mut operation: Value) -> Value {
    operation["security"] = json!([{"bearer": []}]);
    operation["responses"]["401"] = ok(
        "the API token is set and the request lacks it",
        schema_ref("Error"),
    );
    operation["responses"]["403"] = ok(
        "the request comes from another site's page (its Origin is not this server's, nor allowed)",
        schema_ref("Error"),
    );
    operation
}

fn path_id() -> Value {
    json!({"name": "id", "in": "path", "required": true, "schema": {"type": "string"}})
}

fn agent_spec_schema() -> Value {
    json!({"oneOf": [
        {"type": "string", "example": "minimax:4", "description": "short spec: random, greedy, minimax:D, heuristic:SET:WEIGHTS:D, pekar, pekar-minimax:D, perfect:S, run:ID"},
        {"type": "object", "required": ["kind"], "properties": {
            "kind": {"type": "string", "enum": ["random", "greedy", "minimax", "heuristic", "pekar", "pekar-minimax", "perfect", "run"]},
            "depth": {"type": "integer", "minimum": 1, "maximum": Profile::Api.limits().max_depth},
            "time_ms": {"type": "integer"},
            "features": {}, "weights": {}, "ties": {"type": "string", "enum": ["random", "first"]},
            "from_export": {"type": "object", "description": "an export document"},
            "id": {"type": "string", "description": "run id (kind run)"}
        }}
    ]})
}

/// The OpenAPI 3 document. One long JSON literal on purpose: it reads as the API's table of
/// contents, and splitting it by route would scatter what a reader compares side by side.
pub fn spec() -> Value {
    let run = schema_ref("Run");
    let board = json!({"type": "object", "properties": {"pits": {"type": "integer"}, "seeds": {"type": "integer"}}});
    let paths = json!({
        "/api/runs": {
            "get": op("List runs, newest first", vec![("200", ok("the runs", json!({"type": "object", "properties": {"runs": {"type": "array", "items": run}}})))], &[]),
            "post": secured(with_body(
                op("Create a run (queued for a worker)", vec![("201", ok("the new run", run.clone()))], &[400, 401, 413, 422, 429]),
                json!({"type": "object", "properties": {
                    "tuner": {"type": "string", "enum": ["ga", "td", "td-leaf", "texel"], "nullable": true, "description": "the tuner (default ga): the GA, TD(lambda), TD-Leaf(lambda) or Texel-style fitting"},
                    "preset": {"type": "string", "enum": ["abrams", "hunter", "ahmed"], "nullable": true, "description": "GA presets abrams and hunter; TD preset ahmed"},
                    "config": {"type": "object", "description": "partial config laid over the tuner's preset or defaults: a GaConfig, or a learning config (the learner's fields with play_depth, checkpoint_games and benchmark)"},
                    "name": {"type": "string", "nullable": true, "maxLength": 200}
                }, "additionalProperties": false})))
        },
        "/api/runs/{id}": {
            "get": with_params(op("Show a run", vec![("200", ok("the run", run.clone()))], &[404]), json!([path_id()])),
            "patch": secured(with_params(with_body(
                op("Rename a run or set its notes and tags (any status; each part only when given)", vec![("200", ok("the run", run.clone()))], &[400, 401, 403, 404, 415, 422]),
                json!({"type": "object", "properties": {
                    "name": {"type": "string", "maxLength": 200, "description": "empty clears the name"},
                    "notes": {"type": "string", "maxLength": 10000},
                    "tags": {"type": "array", "maxItems": 20, "items": {"type": "string", "maxLength": 40}}
                }, "additionalProperties": false})), json!([path_id()]))),
            "delete": secured(with_params(json!({"summary": "Delete a run and its generations (cancels it first)", "responses": {"204": {"description": "deleted"}, "401": ok("token", schema_ref("Error")), "404": ok("unknown id", schema_ref("Error"))}}), json!([path_id()])))
        },
        "/api/runs/{id}/cancel": {
            "post": secured(with_params(op("Cancel a queued or running run", vec![("200", ok("the run, cancelled", run.clone()))], &[401, 404, 409]), json!([path_id()])))
        },
        "/api/runs/{id}/resume": {
            "post": secured(with_params(op("Queue a cancelled or failed run again; it continues from its last generation", vec![("200", ok("the run, queued", run.clone()))], &[401, 404, 409]), json!([path_id()])))
        },
        "/api/runs/{id}/generations": {
            "get": with_params(op("The fitness curve", vec![("200", ok("one point per generation", json!({"type": "object", "properties": {"run_id": {"type": "string"}, "generations": {"type": "array", "items": schema_ref("GenerationPoint")}}})))], &[404, 422]),
                json!([path_id(), {"name": "since", "in": "query", "required": false, "schema": {"type": "integer"}, "description": "only generations after this one"}]))
        },
        "/api/runs/{id}/generations/{g}": {
            "get": with_params(op("A generation's full record: every individual's weights and fitness", vec![("200", ok("the record", schema_ref("GenerationRecord")))], &[404]),
                json!([path_id(), {"name": "g", "in": "path", "required": true, "schema": {"type": "integer"}}]))
        },
        "/api/runs/{id}/export": {
            "get": with_params(op("The export document (as a download)", vec![("200", ok("the export document", schema_ref("ExportDocument")))], &[404, 409]), json!([path_id()]))
        },
        "/api/runs/{id}/events": {
            "get": with_params(json!({"summary": "Server-sent events: `status` (data: the run; sent first on connect) and `generation` (data: a generation point plus run_id)",
                "responses": {"200": {"description": "an event stream", "content": {"text/event-stream": {"schema": {"type": "string"}}}}, "404": ok("unknown id", schema_ref("Error"))}}), json!([path_id()]))
        },
        "/api/agents": {
            "get": op("Agent catalogue: kinds with parameters, presets, and an agent per run with a generation", vec![("200", ok("the catalogue", json!({"type": "object", "properties": {
                "agents": {"type": "array", "items": {"type": "object"}},
                "presets": {"type": "object"},
                "exports": {"type": "array", "items": {"type": "object", "properties": {"run_id": {"type": "string"}, "spec": {"type": "object"}, "label": {"type": "string"}}}}
            }})))], &[])
        },
        "/api/config-schema": {
            "get": op("The GA config as a form: defaults, presets, every field's range and when it applies", vec![("200", ok("the schema", json!({"type": "object", "properties": {
                "defaults": {"type": "object"}, "presets": {"type": "object"}, "groups": {"type": "array", "items": {"type": "object"}},
                "feature_sets": {"type": "array", "items": {"type": "string"}}, "max_core_hours": {"type": "number"}
            }})))], &[])
        },
        "/api/move": {
            "post": secured(with_body(op("Ask an agent for a move", vec![("200", ok("the move and the position after it", schema_ref("MoveResult")))], &[400, 401, 422]),
                json!({"type": "object", "required": ["agent", "position"], "properties": {
                    "agent": agent_spec_schema(), "position": {"type": "string", "description": "KPN"},
                    "seed": {"type": "integer", "minimum": 0}, "rules": {"type": "string", "enum": ["standard", "empty-capture"]}, "pie": {"type": "boolean", "default": false, "description": "the pie rule: a start position is the opening (no extra turn, North may then swap, move 16)"}}})))
        },
        "/api/position": {
            "post": secured(with_body(op("Play a move (a human's) in a position", vec![("200", ok("the position after the move", schema_ref("MoveResult")))], &[400, 401, 422]),
                json!({"type": "object", "required": ["position", "move"], "properties": {
                    "position": {"type": "string"}, "move": {"type": "integer", "minimum": 1},
                    "rules": {"type": "string", "enum": ["standard", "empty-capture"]}, "pie": {"type": "boolean", "default": false, "description": "the pie rule: a start position is the opening (no extra turn, North may then swap, move 16)"}}})))
        },
        "/api/position/start": {
            "get": with_params(op("The start position of Kalah(pits, seeds)", vec![("200", ok("the position", schema_ref("PositionView")))], &[422]),
                json!([{"name": "pits", "in": "query", "schema": {"type": "integer", "default": 6}}, {"name": "seeds", "in": "query", "schema": {"type": "integer", "default": 4}}]))
        },
        "/api/matches": {
            "post": secured(with_body(op("Play a match of colour-swapped pairs", vec![("200", ok("games, A's score and the report", json!({"type": "object", "properties": {
                    "games": {"type": "array", "items": {"type": "object"}}, "score": {"type": "number"}, "summary": {"type": "object"},
                    "verdict": {"type": "string", "enum": ["accept_h0", "accept_h1", "inconclusive"], "description": "with sprt: the test's verdict, beside counts, llr, lower_bound, upper_bound, pairs and estimate"}}})))], &[400, 401, 422]),
                json!({"type": "object", "required": ["south", "north"], "properties": {
                    "south": agent_spec_schema(), "north": agent_spec_schema(),
                    "games": {"type": "integer", "minimum": 1, "maximum": MAX_MATCH_GAMES, "default": 10},
                    "seed": {"type": "integer"}, "opening_plies": {"type": "integer", "minimum": 0, "maximum": 30},
                    "board": board, "rules": {"type": "string"}, "fixed_colours": {"type": "boolean"},
                    "sprt": {"description": "play pairs until an SPRT decides: \"ELO0,ELO1[,ALPHA,BETA]\" or {elo0, elo1, alpha, beta}; not with games"},
                    "max_pairs": {"type": "integer", "minimum": 1, "maximum": MAX_SPRT_PAIRS, "default": MAX_SPRT_PAIRS / 2}}})))
        },
        "/api/tournaments": {
            "get": op("The newest 100 tournaments (stored; without their tables), newest first", vec![("200", ok("the tournaments", json!({"type": "object", "properties": {"tournaments": {"type": "array", "items": {"type": "object"}}}})))], &[]),
            "post": secured(with_body(op("Start a round-robin tournament", vec![("202", ok("started", json!({"type": "object", "properties": {"id": {"type": "string"}, "status": {"type": "string"}}})))], &[400, 401, 422, 429]),
                json!({"type": "object", "required": ["agents"], "properties": {
                    "agents": {"type": "array", "items": agent_spec_schema(), "minItems": 2, "maxItems": MAX_TOURNAMENT_AGENTS},
                    "games": {"type": "integer", "minimum": 2, "maximum": MAX_TOURNAMENT_GAMES, "multipleOf": 2, "default": 20},
                    "names": {"type": "array", "items": {"type": "string", "minLength": 1, "maxLength": 60}, "description": "display names of the agents, in their order"},
                    "seed": {"type": "integer"}, "opening_plies": {"type": "integer"}, "self_play": {"type": "boolean"},
                    "sprt": {"description": "play each pairing as an SPRT (\"ELO0,ELO1[,ALPHA,BETA]\" or {elo0, elo1, alpha, beta}), games being its cap; not with self_play. The finished tournament then has sprt: each pairing's verdict, LLR, bounds and Elo"},
                    "board": board, "rules": {"type": "string"}}})))
        },
        "/api/tournaments/{id}": {
            "get": with_params(op("A tournament's state and cross-table", vec![("200", ok("the tournament", schema_ref("Tournament")))], &[404]), json!([path_id()]))
        },
        "/api/tournaments/{id}/cancel": {
            "post": secured(with_params(op("Cancel a running tournament: the games under way finish, the rest are not played", vec![("200", ok("the tournament, cancelled", schema_ref("Tournament")))], &[401, 404, 409]), json!([path_id()])))
        },
        "/api/healthz": {"get": op("Health and database kind", vec![("200", ok("healthy", schema_ref("Health")))], &[])},
        "/healthz": {"get": op("Health and database kind", vec![("200", ok("healthy", schema_ref("Health")))], &[])},
        "/api/openapi.json": {"get": op("This document", vec![("200", ok("OpenAPI 3.0", json!({"type": "object"})))], &[])}
    });
    let nullable_number = json!({"type": "number", "nullable": true});
    let nullable_string = json!({"type": "string", "nullable": true});
    let schemas = json!({
        "Error": {"type": "object", "properties": {"error": {"type": "object", "properties": {
            "status": {"type": "integer"}, "field": nullable_string, "message": {"type": "string"}}}}},
        "Run": {"type": "object", "properties": {
            "id": {"type": "string"}, "name": nullable_string,
            "status": {"type": "string", "enum": ["queued", "running", "finished", "cancelled", "failed"]},
            "tuner": {"type": "string", "enum": ["ga", "td", "td-leaf", "texel"], "nullable": true},
            "preset": nullable_string, "config": {"type": "object"}, "seed": {"type": "integer"},
            "generations_total": {"type": "integer"}, "generations_done": {"type": "integer"},
            "progress": {"type": "number"}, "best_fitness": nullable_number,
            "best_weights": {"type": "array", "items": {"type": "number"}, "nullable": true},
            "features": {"type": "array", "items": {"type": "string"}},
            "created_at": {"type": "string", "format": "date-time"},
            "started_at": nullable_string, "finished_at": nullable_string,
            "notes": {"type": "string"}, "tags": {"type": "array", "items": {"type": "string"}},
            "error": nullable_string, "stop_reason": {"type": "string", "nullable": true, "enum": ["generations", "stagnation", "target-fitness", null]}}},
        "GenerationPoint": {"type": "object", "properties": {
            "generation": {"type": "integer"}, "best": {"type": "number"}, "mean": {"type": "number"},
            "min": {"type": "number"}, "std": {"type": "number"}, "diversity": {"type": "number"},
            "best_so_far": {"type": "number"}, "best_weights": {"type": "array", "items": {"type": "number"}},
            "games_played": {"type": "integer"}, "wall_ms": {"type": "integer"}}},
        "GenerationRecord": {"type": "object", "properties": {
            "generation": {"type": "integer"}, "features": {"type": "array", "items": {"type": "string"}},
            "individuals": {"type": "array", "items": {"type": "object", "properties": {"weights": {"type": "array", "items": {"type": "number"}}, "fitness": {"type": "number"}}}},
            "fitness": {"type": "object"}, "best_index": {"type": "integer"}, "diversity": {"type": "number"},
            "hall_of_fame": {"type": "object"}, "games_played": {"type": "integer"}, "stop": nullable_string,
            "timing": {"type": "object", "properties": {"wall_ms": {"type": "integer"}}}}},
        "ExportDocument": {"type": "object", "properties": {
            "format_version": {"type": "integer"}, "generator": {"type": "string"}, "rules": {"type": "string"},
            "board": {"type": "object"}, "features": {"type": "array", "items": {"type": "string"}},
            "weights": {"type": "array", "items": {"type": "number"}}, "fitness": {"type": "number"},
            "generation": {"type": "integer"}, "depth": {"type": "integer"}, "seed": {"type": "integer"},
            "config": {"type": "object"}, "history": {"type": "array", "items": {"type": "object"}}, "agent": {"type": "object"}}},
        "PositionView": {"type": "object", "properties": {
            "position": {"type": "string"}, "legal_moves": {"type": "array", "items": {"type": "integer"}},
            "to_move": {"type": "string", "enum": ["south", "north"]}, "stores": {"type": "array", "items": {"type": "integer"}},
            "game_over": {"type": "boolean"}, "pits": {"type": "integer"}}},
        "MoveResult": {"type": "object", "properties": {
            "move": {"type": "integer"}, "nodes": {"type": "integer"}, "playouts": {"type": "integer"},
            "value": {"type": "object", "nullable": true, "description": "the agent's own value of the move, in its unit",
                "properties": {"unit": {"type": "string", "enum": ["search_score", "pekar_cost", "exact_margin", "seeds_this_turn", "network_estimate", "playout_score"]}, "value": {"type": "number"}}},
            "value_text": nullable_string,
            "position_after": {"type": "string"}, "extra_turn": {"type": "boolean"}, "capture": {"type": "integer"},
            "game_over": {"type": "boolean"}, "legal_moves": {"type": "array", "items": {"type": "integer"}},
            "to_move": {"type": "string"}, "stores": {"type": "array", "items": {"type": "integer"}}}},
        "Tournament": {"type": "object", "properties": {
            "id": {"type": "string"}, "status": {"type": "string", "enum": ["running", "finished", "failed"]},
            "agents": {"type": "array", "items": {"type": "string"}},
            "table": {"type": "array", "items": {"type": "array", "items": {"type": "object", "nullable": true}}},
            "scores": {"type": "array", "items": {"type": "object"}}, "progress": {"type": "number"}, "error": nullable_string}},
        "Health": {"type": "object", "properties": {"status": {"type": "string"}, "database": {"type": "string", "enum": ["sqlite", "postgres"]}}}
    });
    json!({
        "openapi": "3.0.3",
        "info": {
            "title": "kalah-tuner",
            "version": env!("CARGO_PKG_VERSION"),
            "description": format!("Evolve Kalah evaluation weights with a GA, play agents, run matches and tournaments. JSON bodies up to {MAX_BODY_BYTES} bytes. When KALAH_TUNER_TOKEN is set, POST and DELETE need `Authorization: Bearer <token>`.")
        },
        "paths": paths,
        "components": {
            "schemas": schemas,
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}}
        }
    })
}
