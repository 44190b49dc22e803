//! The OpenAPI 3.1 document of every route, generated from the router.
//!
//! Each handler carries its own `#[utoipa::path]` (method, path, parameters, request body,
//! answers), and [`super::routes`] registers the handlers through utoipa-axum's
//! `OpenApiRouter`, which adds a handler's route and its document entry in one step: a route
//! cannot be served without being documented, nor documented without being served. The
//! request and answer schemas are generated from the Rust types the handlers read and write
//! (utoipa's `ToSchema` on [`super::moves::MoveRequest`], [`crate::agents::AgentSpec`],
//! [`super::run_view::RunView`] and the rest), with the run config's fields from the GA's and
//! the learners' own config types ([`crate::tune::schema::run_config_schema`]).
//!
//! What the handlers' annotations do not say is derived here from the code that decides it:
//! the API's limits (`maximum`, `maxLength`, `maxItems`) come from the constants the handlers
//! check (utoipa's attributes take number literals only, so they are written in after
//! generation, see `bounds`); the token and the cross-site refusal (401, 403, the security
//! requirement) go on every operation whose method [`super::guard`] treats as a state change;
//! the refusals of a JSON body (408, 413, 415) on every operation that takes one.
//!
//! Written by hand, because no Rust type describes them: the event streams' frames
//! (`text/event-stream`), the GA's and the store's documents that have no `ToSchema`
//! (`GenerationPoint`, `GenerationRecord`, `ExportDocument`, the config form; the SPRT report
//! in `schemas`), and an agent in any of the forms a request may give it (`ApiAgent`). The API
//! fuzzing run (`tests/fuzz/schemathesis.sh`) checks all of them against real answers.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use axum::Json;
use serde_json::{json, Map, Value};
use utoipa::openapi::response::Response;
use utoipa::openapi::schema::Schema;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::openapi::RefOr;
use utoipa::{IntoResponses, OpenApi, PartialSchema, ToSchema};

use super::agents::Catalogue;
use super::batch_workers::Workers;
use super::error::ErrorBody;
use super::health::{Health, READY_TIMEOUT};
use super::limits::Limits;
use super::matches::{BoardBody, MatchAnswer, MatchRequest, MAX_MATCH_GAMES, MAX_SPRT_PAIRS};
use super::moves::{MoveRequest, MoveResult, PlayedMove, PositionMove, PositionView};
use super::run_view::RunView;
use super::runs::{
    CreateRun, DescribeRun, GenerationsPage, RunEstimate, RunsPage, MAX_NAME_CHARS,
    MAX_NOTES_CHARS, MAX_TAGS,
};
use super::schemas::{from_json, SprtReportSchema};
use super::sprt_tests::{SprtTestList, SprtTestRequest, SprtTestView};
use super::state::MAX_BODY_BYTES;
use super::tournaments::{
    TournamentList, TournamentRequest, TournamentStarted, TournamentState, MAX_TOURNAMENT_GAMES,
};
use crate::agents::{AgentSpec, Profile};
use crate::game::{MAX_PITS, SWAP};
use crate::matches::MAX_OPENING_PLIES;

/// The request and answer types, with every type they name: the handlers' annotations bring
/// most of them too, this list keeps those that only other schemas name.
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
    AgentSpec,
    GenerationPointSchema,
)))]
struct ApiTypes;

/// The limits the handlers check, as `(schema, property, keyword, value)`: written into the
/// generated schemas because utoipa's attributes take number literals only, and a literal
/// beside the constant it copies drifts from it. A test checks that each lands on a property.
fn bounds() -> [(&'static str, &'static str, &'static str, u64); 14] {
    [
        ("MatchRequest", "games", "maximum", MAX_MATCH_GAMES as u64),
        ("MatchRequest", "max_pairs", "maximum", MAX_SPRT_PAIRS),
        (
            "MatchRequest",
            "opening_plies",
            "maximum",
            MAX_OPENING_PLIES as u64,
        ),
        ("SprtTestRequest", "max_pairs", "maximum", MAX_SPRT_PAIRS),
        (
            "SprtTestRequest",
            "opening_plies",
            "maximum",
            MAX_OPENING_PLIES as u64,
        ),
        (
            "SprtTestRequest",
            "name",
            "maxLength",
            MAX_NAME_CHARS as u64,
        ),
        (
            "TournamentRequest",
            "games",
            "maximum",
            MAX_TOURNAMENT_GAMES as u64,
        ),
        (
            "TournamentRequest",
            "opening_plies",
            "maximum",
            MAX_OPENING_PLIES as u64,
        ),
        ("BoardBody", "pits", "maximum", MAX_PITS as u64),
        ("PositionMove", "move", "maximum", SWAP as u64),
        ("CreateRun", "name", "maxLength", MAX_NAME_CHARS as u64),
        ("DescribeRun", "name", "maxLength", MAX_NAME_CHARS as u64),
        ("DescribeRun", "notes", "maxLength", MAX_NOTES_CHARS as u64),
        ("DescribeRun", "tags", "maxItems", MAX_TAGS as u64),
    ]
}

/// Writes [`bounds`] into `schemas`; answers the entries that found no such property.
fn write_bounds(schemas: &mut Map<String, Value>) -> Vec<String> {
    let mut missed = Vec::new();
    for (schema, property, keyword, value) in bounds() {
        match schemas
            .get_mut(schema)
            .and_then(|s| s.get_mut("properties"))
            .and_then(|p| p.get_mut(property))
            .and_then(Value::as_object_mut)
        {
            Some(prop) => {
                prop.insert(keyword.into(), json!(value));
            }
            None => missed.push(format!("{schema}.{property}")),
        }
    }
    missed
}

/// An error answer: the API's one error body.
fn error_answer(description: impl Into<String>) -> RefOr<Response> {
    let content = utoipa::openapi::ContentBuilder::new()
        .schema(Some(utoipa::openapi::Ref::from_schema_name(
            ErrorBody::name(),
        )))
        .build();
    RefOr::T(
        utoipa::openapi::ResponseBuilder::new()
            .description(description)
            .content("application/json", content)
            .build(),
    )
}

/// Error answers that several routes share, named in the handlers' `responses(...)`: each
/// is one status with the [`ErrorBody`].
macro_rules! error_answers {
    ($($(#[$doc:meta])* $name:ident = $status:literal, $text:expr;)*) => {$(
        $(#[$doc])*
        pub struct $name;

        impl IntoResponses for $name {
            fn responses() -> BTreeMap<String, RefOr<Response>> {
                BTreeMap::from([($status.to_string(), error_answer($text))])
            }
        }
    )*};
}

error_answers! {
    /// 400: the request cannot be read.
    BadRequest = 400, "malformed JSON, a body that is not an object, or a query field given twice";
    /// 404: no such run, tournament or test.
    NotFound = 404, "unknown id";
    /// 409: the object is not in a state that allows this.
    Conflict = 409, "not in a state that allows this";
    /// 422: a field the server refuses, named by `field`.
    Invalid = 422, "an invalid field; `field` names it";
    /// 429: the queue is full.
    TooMany = 429, "too many queued runs or tournaments";
    /// 503: no compute slot came free, or a computation ran past its deadline.
    Busy = 503, "busy: every compute slot is taken (with Retry-After), or a computation ran past its deadline";
    /// 503: the database did not answer the readiness probe in time.
    NotReady = 503, format!("the database did not answer within {} s", READY_TIMEOUT.as_secs_f64());
}

/// A schema written as JSON for a document that no Rust type describes, under its name.
macro_rules! written_schemas {
    ($($(#[$doc:meta])* $name:ident = $schema:literal, $json:expr;)*) => {$(
        $(#[$doc])*
        pub struct $name;

        impl PartialSchema for $name {
            fn schema() -> RefOr<Schema> {
                from_json($json)
            }
        }

        impl ToSchema for $name {
            fn name() -> std::borrow::Cow<'static, str> {
                std::borrow::Cow::Borrowed($schema)
            }
        }
    )*};
}

written_schemas! {
    /// A point of a run's fitness curve (`crate::store::GenerationPoint`, a store type).
    GenerationPointSchema = "GenerationPoint", json!({"type": "object", "properties": {
        "generation": {"type": "integer"}, "best": {"type": "number"}, "mean": {"type": "number"},
        "min": {"type": "number"}, "std": {"type": "number"}, "diversity": {"type": "number"},
        "best_so_far": {"type": "number"}, "best_weights": {"type": "array", "items": {"type": "number"}},
        "games_played": {"type": "integer"}, "wall_ms": {"type": "integer"}}});
    /// A generation's full record ([`crate::ga::GenerationRecord`], the GA's document).
    GenerationRecordSchema = "GenerationRecord", json!({"type": "object", "properties": {
        "generation": {"type": "integer"}, "features": {"type": "array", "items": {"type": "string"}},
        "individuals": {"type": "array", "items": {"type": "object", "properties": {"weights": {"type": "array", "items": {"type": "number"}}, "fitness": {"type": "number"}}}},
        "fitness": {"type": "object"}, "best_index": {"type": "integer"}, "diversity": {"type": "number"},
        "hall_of_fame": {"type": "object"}, "games_played": {"type": "integer"}, "stop": {"type": ["string", "null"]},
        "timing": {"type": "object", "properties": {"wall_ms": {"type": "integer"}}}}});
    /// A run's export ([`crate::tune::ExportDocument`], a file format of its own).
    ExportDocumentSchema = "ExportDocument", json!({"type": "object", "properties": {
        "format_version": {"type": "integer"}, "generator": {"type": "string"}, "rules": {"type": "string"},
        "board": {"type": "object"}, "features": {"type": "array", "items": {"type": "string"}},
        "weights": {"type": "array", "items": {"type": "number"}}, "fitness": {"type": "number"},
        "generation": {"type": "integer"}, "depth": {"type": "integer"}, "seed": {"type": "integer"},
        "config": {"type": "object"}, "history": {"type": "array", "items": {"type": "object"}}, "agent": {"type": "object"}}});
    /// The config form ([`crate::tune::schema::config_schema`], built as JSON).
    ConfigFormSchema = "ConfigForm", json!({"type": "object", "properties": {
        "defaults": {"type": "object"}, "presets": {"type": "object"}, "groups": {"type": "array", "items": {"type": "object"}},
        "feature_sets": {"type": "array", "items": {"type": "string"}}, "max_core_hours": {"type": "number"}}});
    /// One frame of a run event stream (`text/event-stream`: an `event:` and a `data:` line).
    StreamEventSchema = "StreamEvent", json!({"type": "object", "required": ["event", "data"], "properties": {
        "event": {"type": "string", "enum": ["status", "generation", "end"]},
        "data": {"type": "string", "description": "JSON: the run (status), a generation point with run_id (generation), or run_id and the final status, `deleted` for a deleted run (end)"}}});
}

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

/// The API profile's limits written into the agent kinds' numeric fields (the derive knows
/// the types, the limits table knows the bounds).
fn write_agent_limits(schemas: &mut Map<String, Value>) {
    let limits = Profile::Api.limits();
    let Some(kinds) = schemas
        .get_mut("AgentSpec")
        .and_then(|s| s.get_mut("oneOf"))
        .and_then(Value::as_array_mut)
    else {
        return;
    };
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

const METHODS: [&str; 8] = [
    "get", "put", "post", "delete", "options", "head", "patch", "trace",
];

/// The refusals that come from what every request passes rather than from a handler: the
/// guards' (401, 403 and the optional bearer token, on each method [`super::guard`] counts as
/// a state change) and the JSON body extractor's (408, 413, 415, on each operation with a
/// body).
fn write_refusals(paths: &mut Map<String, Value>) {
    let body_read = Limits::default().body_read.as_secs();
    for item in paths.values_mut().filter_map(Value::as_object_mut) {
        for (method, op) in item.iter_mut() {
            let Some(op) = op
                .as_object_mut()
                .filter(|_| METHODS.contains(&method.as_str()))
            else {
                continue;
            };
            let Ok(parsed) = axum::http::Method::from_bytes(method.to_uppercase().as_bytes())
            else {
                continue;
            };
            let mut refusals = Vec::new();
            if op.contains_key("requestBody") {
                refusals.extend([
                    ("415", "the body was not sent as Content-Type: application/json".to_string()),
                    ("408", format!("the body did not arrive within {body_read} s of the headers (the server's default)")),
                    ("413", format!("request body too large (over {MAX_BODY_BYTES} bytes, refused at once when Content-Length says so)")),
                ]);
            }
            if super::guard::changes_state(&parsed) {
                // Optional: the empty requirement is the default server, which has no token.
                op.insert("security".into(), json!([{}, {"bearer": []}]));
                refusals.extend([
                    ("401", "the API token is set and the request lacks it".to_string()),
                    ("403", "the request comes from another site's page (its Origin is not this server's, nor allowed)".to_string()),
                ]);
            }
            let responses = op
                .entry("responses")
                .or_insert_with(|| json!({}))
                .as_object_mut();
            if let Some(responses) = responses {
                for (status, text) in refusals {
                    let answer = serde_json::to_value(error_answer(text)).unwrap_or(Value::Null);
                    responses.insert(status.into(), answer);
                }
            }
        }
    }
}

/// The OpenAPI 3 document: the routers' paths and schemas ([`super::routes::documented`]),
/// with what is derived after generation (module doc) written in.
pub fn spec() -> Value {
    let mut doc = ApiTypes::openapi();
    doc.merge(super::routes::documented());
    doc.info.title = "kalah-tuner".into();
    doc.info.version = env!("CARGO_PKG_VERSION").into();
    doc.info.description = Some(format!("Evolve Kalah evaluation weights with a GA, play agents, run matches and tournaments. JSON bodies up to {MAX_BODY_BYTES} bytes. When KALAH_TUNER_TOKEN is set, POST, PATCH and DELETE need `Authorization: Bearer <token>`."));
    doc.components
        .get_or_insert_with(Default::default)
        .add_security_scheme(
            "bearer",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
        );
    let mut value = serde_json::to_value(&doc).unwrap_or(Value::Null);
    if let Some(paths) = value.get_mut("paths").and_then(Value::as_object_mut) {
        write_refusals(paths);
    }
    if let Some(schemas) = value
        .pointer_mut("/components/schemas")
        .and_then(Value::as_object_mut)
    {
        write_agent_limits(schemas);
        write_bounds(schemas);
        schemas.insert("ApiAgent".into(), api_agent_schema());
        schemas.insert("RunConfig".into(), crate::tune::schema::run_config_schema());
    }
    value
}

/// Built once: the routers and the schemas do not change while the process runs.
static DOCUMENT: LazyLock<Value> = LazyLock::new(spec);

#[utoipa::path(
    get,
    path = "/openapi.json",
    operation_id = "openapi",
    summary = "This document",
    responses((status = 200, description = "OpenAPI 3.1", body = Object))
)]
pub async fn document() -> Json<Value> {
    Json(DOCUMENT.clone())
}

/// An optional query parameter, for the queries' hand-written `IntoParams`: the handlers read
/// most parameters as text to answer a bad one in the API's error shape, so the query types'
/// fields do not say what the parameters hold.
pub fn query_param(
    name: &str,
    description: &str,
    schema: utoipa::openapi::ObjectBuilder,
) -> utoipa::openapi::path::Parameter {
    use utoipa::openapi::path::{ParameterBuilder, ParameterIn};
    ParameterBuilder::new()
        .name(name)
        .parameter_in(ParameterIn::Query)
        .required(utoipa::openapi::Required::False)
        .description(Some(description))
        .schema(Some(schema.build()))
        .build()
}

/// The schema of an integer parameter.
pub fn integer() -> utoipa::openapi::ObjectBuilder {
    utoipa::openapi::ObjectBuilder::new().schema_type(utoipa::openapi::Type::Integer)
}

/// The schema of a text parameter.
pub fn text() -> utoipa::openapi::ObjectBuilder {
    utoipa::openapi::ObjectBuilder::new().schema_type(utoipa::openapi::Type::String)
}

#[cfg(test)]
mod tests {
    use super::*;

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

    /// Every `$ref` of the document names a schema it holds: the generated ones come under
    /// their types' names (or their `as`), the written ones under theirs (a written schema
    /// that does not parse would name `#/invalid`).
    #[test]
    fn every_reference_resolves() {
        let doc = spec();
        let mut found = Vec::new();
        refs(&doc, &mut found);
        assert!(found.iter().any(|r| r == "#/components/schemas/Run"));
        for r in found {
            let name = r.trim_start_matches("#/components/schemas/");
            assert!(doc["components"]["schemas"][name].is_object(), "{r}");
        }
    }

    /// Each limit of the table lands on a property of the generated schemas (a renamed field
    /// would otherwise lose its bound without a word), and the document carries it.
    #[test]
    fn the_bounds_are_the_handlers_constants() {
        let mut doc = ApiTypes::openapi();
        doc.merge(crate::server::routes::documented());
        let mut generated = serde_json::to_value(&doc).unwrap_or(Value::Null);
        let schemas = generated
            .pointer_mut("/components/schemas")
            .and_then(Value::as_object_mut)
            .expect("generated schemas");
        assert_eq!(write_bounds(schemas), Vec::<String>::new());
        let served = spec();
        let field = |schema: &str, field: &str| {
            served["components"]["schemas"][schema]["properties"][field].clone()
        };
        assert_eq!(field("MatchRequest", "games")["maximum"], MAX_MATCH_GAMES);
        assert_eq!(
            field("MatchRequest", "max_pairs")["maximum"],
            MAX_SPRT_PAIRS
        );
        assert_eq!(
            field("TournamentRequest", "games")["maximum"],
            MAX_TOURNAMENT_GAMES
        );
        assert_eq!(field("BoardBody", "pits")["maximum"], MAX_PITS);
        assert_eq!(field("PositionMove", "move")["maximum"], SWAP);
        assert_eq!(field("DescribeRun", "tags")["maxItems"], MAX_TAGS);
        assert_eq!(field("DescribeRun", "notes")["maxLength"], MAX_NOTES_CHARS);
        assert_eq!(field("CreateRun", "name")["maxLength"], MAX_NAME_CHARS);
        // The query limits come from the handlers' constants too.
        let limit = |path: &str| {
            served["paths"][path]["get"]["parameters"]
                .as_array()
                .and_then(|ps| ps.iter().find(|p| p["name"] == "limit"))
                .map(|p| p["schema"]["maximum"].clone())
        };
        assert_eq!(
            limit("/api/runs"),
            Some(json!(crate::server::runs::MAX_RUNS_PAGE))
        );
        assert_eq!(
            limit("/api/runs/{id}/generations"),
            Some(json!(crate::server::runs::MAX_GENERATIONS_PAGE))
        );
        // Every schema written as JSON parses.
        use crate::server::schemas::{preset_name, sprt, tuner_name};
        let agents = crate::server::tournaments::agent_list_schema();
        let report = crate::server::schemas::sprt_report();
        for schema in [agents, sprt(), tuner_name(), preset_name(), report] {
            assert!(!matches!(schema, RefOr::Ref(ref r) if r.ref_location == "#/invalid"));
        }
    }

    /// Operation ids name one operation each (the probes are served at two paths), and every
    /// state change documents the guards' refusals.
    #[test]
    fn operations_are_named_once_and_state_changes_are_guarded() {
        let doc = spec();
        let mut ids = Vec::new();
        for (path, item) in doc["paths"].as_object().expect("paths") {
            for (method, op) in item.as_object().expect("path item") {
                let id = op["operationId"].as_str().unwrap_or_default().to_string();
                assert!(!id.is_empty(), "{method} {path} has an operation id");
                assert!(!ids.contains(&id), "{id} names two operations");
                ids.push(id);
                if method != "get" {
                    for code in ["401", "403"] {
                        assert!(op["responses"][code].is_object(), "{method} {path} {code}");
                    }
                }
                if op.get("requestBody").is_some() {
                    assert!(op["responses"]["415"].is_object(), "{method} {path} 415");
                }
            }
        }
        assert!(ids.contains(&"healthz_unprefixed".to_string()));
    }
}
