//! The OpenAPI 3.1 document of every route.
//!
//! The request bodies' schemas are generated from the Rust types the handlers deserialise
//! (utoipa's `ToSchema` on [`super::moves::MoveRequest`], [`crate::agents::AgentSpec`] and the
//! rest), with the API's limits from the limits table and the run config's fields from the
//! GA's and the learners' own config types ([`crate::tune::schema::run_config_schema`]), so they
//! cannot drift from what the server accepts. The schemas of the answers (runs, positions and
//! moves, matches, tournaments, SPRT tests, the catalogue, generation pages, the estimate,
//! workers, health, errors) are generated from the types the handlers serialise in the same
//! way. The table of routes is written here by hand (a test checks it against the router), and
//! so are the schemas of the documents the store and the GA define (`GenerationPoint`,
//! `GenerationRecord`, `ExportDocument`; the SPRT report in `schemas`) and of the event
//! streams; the API fuzzing run (`tests/fuzz/schemathesis.sh`) checks all of them against real
//! answers.

use axum::Json;
use serde_json::{json, Map, Value};
use utoipa::OpenApi;

use super::agents::Catalogue;
use super::batch_workers::Workers;
use super::error::ErrorBody;
use super::health::Health;
use super::matches::{BoardBody, MatchAnswer, MatchRequest};
use super::moves::{MoveRequest, MoveResult, PlayedMove, PositionMove, PositionView};
use super::run_view::RunView;
use super::runs::{CreateRun, DescribeRun, GenerationsPage, RunEstimate, RunsPage};
use super::schemas::SprtReportSchema;
use super::sprt_tests::{SprtTestList, SprtTestRequest, SprtTestView};
use super::state::MAX_BODY_BYTES;
use super::tournaments::{TournamentList, TournamentRequest, TournamentStarted, TournamentState};
use crate::agents::{AgentSpec, Profile};

/// The request and response types whose schemas are generated, with every type they name.
#[derive(OpenApi)]
#[openapi(components(schemas(
    ErrorBody,
    Health,
    Workers,
    RunView,
    RunsPage,
    PositionView,
    PlayedMove,
    MoveResult,
    TournamentStarted,
    TournamentState,
    TournamentList,
    SprtTestView,
    SprtTestList,
    MatchAnswer,
    SprtReportSchema,
    Catalogue,
    GenerationsPage,
    RunEstimate,
    CreateRun,
    DescribeRun,
    MoveRequest,
    PositionMove,
    MatchRequest,
    BoardBody,
    TournamentRequest,
    SprtTestRequest,
    AgentSpec
)))]
struct ApiTypes;

/// Every form an agent takes in a request: a short spec, an [`AgentSpec`] object within the
/// API's limits, a run of this server, or an export document given inline (the API reads no
/// file a client names; `export:NAME` and `a3c:NAME` name files of the models folder).
fn api_agent_schema() -> Value {
    json!({
        "description": "an agent: a short spec such as \"minimax:4\", an agent object, a run of this server, or an export document inline",
        "anyOf": [
            {"type": "string", "minLength": 1, "example": "minimax:4",
             "description": "short spec: random, greedy, minimax:D, heuristic:SET:WEIGHTS:D, pekar, pekar-minimax:D, perfect:S, mcts:N, a3c, a3c:NAME, export:NAME, run:ID"},
            {"$ref": "#/components/schemas/AgentSpec"},
            {"type": "object", "required": ["kind", "id"], "additionalProperties": false, "properties": {
                "kind": {"type": "string", "enum": ["run"]}, "id": {"type": "string", "description": "a run's id"}}},
            {"type": "object", "required": ["kind", "path"], "additionalProperties": false, "properties": {
                "kind": {"type": "string", "enum": ["export"]}, "path": {"type": "string", "description": "a file name in the models folder"}}},
            {"type": "object", "required": ["kind", "from_export"], "properties": {
                "kind": {"type": "string", "enum": ["heuristic"]}, "from_export": {"$ref": "#/components/schemas/ExportDocument"}}}
        ]
    })
}

/// The generated schemas, with the API profile's limits written into the agent kinds'
/// numeric fields (the derive knows the types, the limits table knows the bounds).
fn generated_schemas() -> Map<String, Value> {
    let doc = serde_json::to_value(ApiTypes::openapi()).unwrap_or(Value::Null);
    let mut schemas = doc["components"]["schemas"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    let limits = Profile::Api.limits();
    if let Some(kinds) = schemas
        .get_mut("AgentSpec")
        .and_then(|s| s.get_mut("oneOf"))
        .and_then(Value::as_array_mut)
    {
        for kind in kinds {
            let Some(props) = kind.get_mut("properties").and_then(Value::as_object_mut) else {
                continue;
            };
            for (field, max) in [
                ("time_ms", limits.max_time_ms.map(|m| m as f64)),
                ("nodes", Some(limits.max_move_nodes as f64)),
                ("iterations", Some(limits.max_mcts_iterations as f64)),
                ("max_seeds", Some(limits.max_perfect_seeds as f64)),
                ("fallback_depth", Some(limits.max_depth as f64)),
            ] {
                if let (Some(prop), Some(max)) = (props.get_mut(field), max) {
                    prop["maximum"] = json!(max);
                }
            }
            if let Some(depth) = props.get_mut("depth") {
                let max = limits.max_depth;
                *depth = json!({"allOf": [depth.clone()], "description": format!("turns, at most {max} through the API, or \"adaptive\"")});
            }
        }
    }
    schemas.insert("ApiAgent".into(), api_agent_schema());
    schemas.insert("RunConfig".into(), crate::tune::schema::run_config_schema());
    schemas
}

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
                400 => "malformed JSON, a body that is not an object, or a query field given twice",
                401 => "missing or wrong bearer token (when KALAH_TUNER_TOKEN is set)",
                404 => "unknown id",
                409 => "the run is not in a state that allows this",
                503 => "busy or unready: every compute slot is taken (with Retry-After), a computation ran past its deadline, or (readyz) the database did not answer within 1 s",
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
    operation["responses"]["408"] = ok(
        "the body did not arrive within 60 s of the headers",
        schema_ref("Error"),
    );
    operation["responses"]["413"] = ok(
        "request body too large (over 1 MiB, refused at once when Content-Length says so)",
        schema_ref("Error"),
    );
    operation
}

/// OpenAPI links from a response whose body has the new object's `id` to the operations on
/// it, so that clients (and the fuzzer's stateful phase) can follow them.
fn with_links(mut response: Value, links: &[(&str, &str, &str)]) -> Value {
    let links: Map<String, Value> = links
        .iter()
        .map(|(name, path, method)| {
            let pointer = path.replace('~', "~0").replace('/', "~1");
            (
                name.to_string(),
                json!({"operationRef": format!("#/paths/{pointer}/{method}"), "parameters": {"id": "$response.body#/id"}}),
            )
        })
        .collect();
    response["links"] = Value::Object(links);
    response
}

fn with_params(mut operation: Value, params: Value) -> Value {
    operation["parameters"] = params;
    operation
}

/// A route that changes state: it needs the token when one is set (401), and refuses requests
/// from other sites' pages (403, see docs/server.md#cross-site-requests).
fn secured(mut operation: Value) -> Value {
    // Optional: the empty requirement is the default server, which has no token.
    operation["security"] = json!([{}, {"bearer": []}]);
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

/// The OpenAPI 3 document. One long JSON literal on purpose: it reads as the API's table of
/// contents, and splitting it by route would scatter what a reader compares side by side.
pub fn spec() -> Value {
    let run = schema_ref("Run");
    let paths = json!({
        "/api/runs": {
            "get": with_params(op("List runs, newest first, a page at a time", vec![("200", ok("a page of runs, and the cursor of the next page (null after the last)", schema_ref("RunsPage")))], &[400, 422]),
                json!([{"name": "limit", "in": "query", "schema": {"type": "integer", "minimum": 1, "maximum": 500, "default": 100}},
                       {"name": "cursor", "in": "query", "schema": {"type": "string"}, "description": "next_cursor of the previous page"},
                       {"name": "fields", "in": "query", "schema": {"type": "string", "enum": ["all", "summary"], "default": "all"}, "description": "summary: each run without config, features and best_weights"}])),
            "post": secured(with_body(
                op("Create a run (queued for a worker)", vec![("201", ok("the new run", run.clone()))], &[400, 401, 413, 422, 429]),
                schema_ref("CreateRun")))
        },
        "/api/runs/estimate": {
            "post": secured(with_body(op("A dry run of creating a run: the config it would get and its estimated cost; nothing is stored", vec![("200", ok("the estimate", schema_ref("RunEstimate")))], &[400, 401, 413, 422]),
                schema_ref("CreateRun")))
        },
        "/api/runs/{id}": {
            "get": with_params(op("Show a run", vec![("200", ok("the run", run.clone()))], &[404]), json!([path_id()])),
            "patch": secured(with_params(with_body(
                op("Rename a run or set its notes and tags (any status; each part only when given)", vec![("200", ok("the run", run.clone()))], &[400, 401, 403, 404, 415, 422]),
                schema_ref("DescribeRun")), json!([path_id()]))),
            "delete": secured(with_params(json!({"summary": "Delete a run and its generations (cancels it first)", "responses": {"204": {"description": "deleted"}, "401": ok("token", schema_ref("Error")), "404": ok("unknown id", schema_ref("Error"))}}), json!([path_id()])))
        },
        "/api/runs/{id}/cancel": {
            "post": secured(with_params(op("Cancel a queued or running run", vec![("200", ok("the run, cancelled", run.clone()))], &[401, 404, 409]), json!([path_id()])))
        },
        "/api/runs/{id}/resume": {
            "post": secured(with_params(op("Queue a cancelled or failed run again; it continues from its last generation", vec![("200", ok("the run, queued", run.clone()))], &[401, 404, 409]), json!([path_id()])))
        },
        "/api/runs/{id}/generations": {
            "get": with_params(op("The fitness curve, whole or a page at a time", vec![("200", ok("one point per generation", schema_ref("GenerationsPage")))], &[400, 404, 422]),
                json!([path_id(), {"name": "since", "in": "query", "required": false, "schema": {"type": "integer"}, "description": "only generations after this one"},
                       {"name": "limit", "in": "query", "required": false, "schema": {"type": "integer", "minimum": 1, "maximum": 5000}, "description": "at most this many points; `next_since` says where the next page starts"}]))
        },
        "/api/runs/{id}/generations/{g}": {
            "get": with_params(op("A generation's full record: every individual's weights and fitness", vec![("200", ok("the record", schema_ref("GenerationRecord")))], &[404]),
                json!([path_id(), {"name": "g", "in": "path", "required": true, "schema": {"type": "integer"}}]))
        },
        "/api/runs/{id}/export": {
            "get": with_params(op("The export document (as a download)", vec![("200", ok("the export document", schema_ref("ExportDocument")))], &[404, 409]), json!([path_id()]))
        },
        "/api/runs/{id}/events": {
            "get": with_params(json!({"summary": "Server-sent events: `status` (data: the run; sent first on connect), `generation` (data: a generation point plus run_id), and once the run has ended (finished, failed, cancelled or deleted; at once for a run that already has) `end` (data: run_id and status), after which the stream closes",
                "responses": {"200": {"description": "an event stream", "content": {"text/event-stream": {"schema": {"type": "object", "required": ["event", "data"], "properties": {
                    "event": {"type": "string", "enum": ["status", "generation", "end"]}, "data": {"type": "string", "description": "JSON: the run (status), a generation point with run_id (generation), or run_id and the final status, `deleted` for a deleted run (end)"}}}}}}, "404": ok("unknown id", schema_ref("Error"))}}), json!([path_id()]))
        },
        "/api/events": {
            "get": with_params(json!({"summary": "Server-sent events of many runs in one connection (the dashboard opens one per browser): the events of `/api/runs/{id}/events`, each naming its run (`status`: the run; `generation`: a point with run_id; `end`: run_id and the final status, `deleted` for a deleted run). Each run named in `runs` gets its `status` first (and `end` if it has ended). The stream stays open after runs end",
                "responses": {"200": {"description": "an event stream", "content": {"text/event-stream": {"schema": {"type": "object", "required": ["event", "data"], "properties": {
                    "event": {"type": "string", "enum": ["status", "generation", "end"]}, "data": {"type": "string", "description": "JSON, as on /api/runs/{id}/events"}}}}}}, "422": ok("too many run ids", schema_ref("Error"))}}),
                json!([{"name": "runs", "in": "query", "required": false, "schema": {"type": "string"}, "description": "comma-separated run ids; every run when absent"}]))
        },
        "/api/agents": {
            "get": op("Agent catalogue: kinds with parameters, presets, and an agent per run with a generation", vec![("200", ok("the catalogue", schema_ref("Catalogue")))], &[])
        },
        "/api/config-schema": {
            "get": op("The GA config as a form: defaults, presets, every field's range and when it applies", vec![("200", ok("the schema", json!({"type": "object", "properties": {
                "defaults": {"type": "object"}, "presets": {"type": "object"}, "groups": {"type": "array", "items": {"type": "object"}},
                "feature_sets": {"type": "array", "items": {"type": "string"}}, "max_core_hours": {"type": "number"}
            }})))], &[])
        },
        "/api/move": {
            "post": secured(with_body(op("Ask an agent for a move", vec![("200", ok("the move and the position after it", schema_ref("MoveResult")))], &[400, 401, 422, 503]),
                schema_ref("MoveRequest")))
        },
        "/api/position": {
            "post": secured(with_body(op("Play a move (a human's) in a position", vec![("200", ok("the position after the move", schema_ref("PlayedMove")))], &[400, 401, 422]),
                schema_ref("PositionMove")))
        },
        "/api/position/start": {
            "get": with_params(op("The start position of Kalah(pits, seeds)", vec![("200", ok("the position", schema_ref("PositionView")))], &[400, 422]),
                json!([{"name": "pits", "in": "query", "schema": {"type": "integer", "default": 6}}, {"name": "seeds", "in": "query", "schema": {"type": "integer", "default": 4}}]))
        },
        "/api/matches": {
            "post": secured(with_body(op("Play a match of colour-swapped pairs", vec![("200", ok("games, A's score and the report; with sprt, the test's report", schema_ref("MatchAnswer")))], &[400, 401, 422, 503]),
                schema_ref("MatchRequest")))
        },
        "/api/tournaments": {
            "get": op("The newest 100 tournaments (stored; without their tables), newest first", vec![("200", ok("the tournaments", schema_ref("TournamentList")))], &[]),
            "post": secured(with_body(op("Start a round-robin tournament", vec![("202", with_links(
                    ok("started", schema_ref("TournamentStarted")),
                    &[("GetTournament", "/api/tournaments/{id}", "get"), ("CancelTournament", "/api/tournaments/{id}/cancel", "post")]))], &[400, 401, 422, 429]),
                schema_ref("TournamentRequest")))
        },
        "/api/tournaments/{id}": {
            "get": with_params(op("A tournament's state and cross-table", vec![("200", ok("the tournament", schema_ref("Tournament")))], &[404]), json!([path_id()]))
        },
        "/api/tournaments/{id}/cancel": {
            "post": secured(with_params(op("Cancel a queued or running tournament, through any server: the games under way finish, the rest are not played", vec![("200", ok("the tournament, cancelled", schema_ref("Tournament")))], &[401, 404, 409]), json!([path_id()])))
        },
        "/api/sprt-tests": {
            "get": op("The SPRT tests of every server on the database (the newest 100), newest first, without their LLR paths", vec![("200", ok("the tests", schema_ref("SprtTestList")))], &[]),
            "post": secured(with_body(op("Start an SPRT test of agent a against agent b, played in the background until the LLR leaves its bounds", vec![("202", with_links(
                    ok("started", schema_ref("SprtTest")),
                    &[("GetSprtTest", "/api/sprt-tests/{id}", "get"), ("CancelSprtTest", "/api/sprt-tests/{id}/cancel", "post")]))], &[400, 401, 409, 422]),
                schema_ref("SprtTestRequest")))
        },
        "/api/sprt-tests/{id}": {
            "get": with_params(op("An SPRT test: counts, LLR and its path, bounds, verdict, Elo", vec![("200", ok("the test", schema_ref("SprtTest")))], &[404]), json!([path_id()]))
        },
        "/api/sprt-tests/{id}/cancel": {
            "post": secured(with_params(op("Stop a running SPRT test: the batch under way finishes, the rest is not played", vec![("200", ok("the test, cancelled", schema_ref("SprtTest")))], &[401, 404, 409]), json!([path_id()])))
        },
        "/api/workers": {
            "get": op("The batch workers on the database (the 100 that beat last), newest heartbeat first: host, threads, status (playing, idle, stopped, lost), the batch under way, batches and games played, games per second", vec![("200", ok("the workers", schema_ref("Workers")))], &[])
        },
        "/api/healthz": {"get": op("Liveness (answers at once, asks the database nothing) and database kind", vec![("200", ok("alive", schema_ref("Health")))], &[])},
        "/healthz": {"get": op("Liveness (answers at once, asks the database nothing) and database kind", vec![("200", ok("alive", schema_ref("Health")))], &[])},
        "/api/readyz": {"get": op("Readiness: the database answers within 1 s", vec![("200", ok("ready", schema_ref("Health")))], &[503])},
        "/readyz": {"get": op("Readiness: the database answers within 1 s", vec![("200", ok("ready", schema_ref("Health")))], &[503])},
        "/metrics": {"get": {"summary": "Prometheus metrics (OpenMetrics text): runs and tournaments by status, run and batch queue depth, batch results, each worker's batches and games a second over the last 5 minutes, compute permits in use, and this process's runs, generations and games",
            "responses": {"200": {"description": "the metrics", "content": {"application/openmetrics-text": {"schema": {"type": "string"}}}}}}},
        "/api/openapi.json": {"get": op("This document", vec![("200", ok("OpenAPI 3.0", json!({"type": "object"})))], &[])}
    });
    let nullable_string = json!({"type": ["string", "null"]});
    let mut schemas = json!({
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
            "config": {"type": "object"}, "history": {"type": "array", "items": {"type": "object"}}, "agent": {"type": "object"}}}
    });
    if let Some(map) = schemas.as_object_mut() {
        map.extend(generated_schemas());
    }
    json!({
        "openapi": "3.1.0",
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::MAX_PITS;
    use crate::matches::MAX_OPENING_PLIES;
    use crate::server::matches::{MAX_MATCH_GAMES, MAX_SPRT_PAIRS};
    use crate::server::tournaments::MAX_TOURNAMENT_GAMES;

    /// Every `$ref` of the document names a schema it holds: the generated ones come under
    /// their types' names (or their `as`).
    #[test]
    fn every_reference_resolves() {
        fn refs(value: &Value, out: &mut Vec<String>) {
            match value {
                Value::Object(map) => {
                    if let Some(Value::String(r)) = map.get("$ref") {
                        out.push(r.clone());
                    }
                    map.values().for_each(|v| refs(v, out));
                }
                Value::Array(items) => items.iter().for_each(|v| refs(v, out)),
                _ => {}
            }
        }
        let doc = spec();
        let mut found = Vec::new();
        refs(&doc, &mut found);
        assert!(found.iter().any(|r| r == "#/components/schemas/Run"));
        for r in found {
            let name = r.trim_start_matches("#/components/schemas/");
            assert!(doc["components"]["schemas"][name].is_object(), "{r}");
        }
    }

    /// utoipa's attributes take literals only: the bounds written there must be the
    /// constants the handlers check.
    #[test]
    fn the_literal_bounds_of_the_request_types_are_the_handlers_constants() {
        let schemas = generated_schemas();
        let field = |schema: &str, field: &str| schemas[schema]["properties"][field].clone();
        assert_eq!(
            field("MatchRequest", "games")["maximum"],
            MAX_MATCH_GAMES as f64
        );
        assert_eq!(
            field("MatchRequest", "max_pairs")["maximum"],
            MAX_SPRT_PAIRS as f64
        );
        assert_eq!(
            field("MatchRequest", "opening_plies")["maximum"],
            MAX_OPENING_PLIES as f64
        );
        assert_eq!(
            field("TournamentRequest", "games")["maximum"],
            MAX_TOURNAMENT_GAMES as f64
        );
        assert_eq!(
            field("TournamentRequest", "opening_plies")["maximum"],
            MAX_OPENING_PLIES as f64
        );
        assert_eq!(field("BoardBody", "pits")["maximum"], MAX_PITS as f64);
        assert_eq!(
            field("PositionMove", "move")["maximum"],
            crate::game::SWAP as f64
        );
        assert_eq!(
            field("DescribeRun", "tags")["maxItems"],
            crate::server::runs::MAX_TAGS
        );
        assert_eq!(
            field("DescribeRun", "notes")["maxLength"],
            crate::server::runs::MAX_NOTES_CHARS
        );
        assert_eq!(
            field("CreateRun", "name")["maxLength"],
            crate::server::runs::MAX_NAME_CHARS
        );
        // Every schema written as JSON parses.
        use crate::server::schemas::{preset_name, sprt, tuner_name};
        use utoipa::openapi::RefOr;
        let agents = crate::server::tournaments::agent_list_schema();
        let report = crate::server::schemas::sprt_report();
        for schema in [agents, sprt(), tuner_name(), preset_name(), report] {
            assert!(!matches!(schema, RefOr::Ref(ref r) if r.ref_location == "#/invalid"));
        }
    }
}
