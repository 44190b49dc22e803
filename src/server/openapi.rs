//! The OpenAPI 3.1 document of every route, generated from the router.
//!
//! Each handler carries its own `#[utoipa::path]` (method, path, parameters, request body,
//! answers), and `routes` registers the handlers through utoipa-axum's
//! `OpenApiRouter`, which adds a handler's route and its document entry in one step: a route
//! cannot be served without being documented, nor documented without being served. The
//! request and answer schemas are generated from the Rust types the handlers read and write
//! (utoipa's `ToSchema` on `super::moves::MoveRequest`, [`crate::agents::AgentSpec`],
//! `super::run_view::RunView` and the rest), with the run config's fields from the GA's and
//! the learners' own config types (`crate::tuners::schema::run_config_schema`).
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
//! (`GenerationPoint`, `GenerationRecord`, `ExportDocument`, the config form: in `api_doc`,
//! where the handlers' annotations name them; the SPRT report in `schemas`), and an agent in
//! any of the forms a request may give it (`ApiAgent`, here). The API
//! fuzzing run (`tests/fuzz/schemathesis.sh`) checks all of them against real answers.

use serde_json::{json, Map, Value};
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::OpenApi;

use super::agents::Catalogue;
use super::api_doc::{error_answer, GenerationPointSchema};
use super::batch_workers::Workers;
use super::error::ErrorBody;
use super::health::Health;
use super::limits::Limits;
use super::matches::{BoardBody, MatchAnswer, MatchRequest, MAX_MATCH_GAMES, MAX_SPRT_PAIRS};
use super::moves::{MoveRequest, MoveResult, PlayedMove, PositionMove, PositionView};
use super::run_view::RunView;
use super::runs::{
    CreateRun, DescribeRun, GenerationsPage, RunEstimate, RunsPage, MAX_NAME_CHARS,
    MAX_NOTES_CHARS, MAX_TAGS, SUMMARY_OMITS,
};
use super::schemas::SprtReportSchema;
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

/// Writes the table of limits (`bounds`) into `schemas`; answers the entries that found no such property.
pub(crate) fn write_bounds(schemas: &mut Map<String, Value>) -> Vec<String> {
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

/// A run as `GET /api/runs?fields=summary` lists it: the run's schema without the fields
/// the handler leaves out ([`SUMMARY_OMITS`]).
fn run_summary(run: &Value) -> Value {
    let mut summary = run.clone();
    if let Some(props) = summary.get_mut("properties").and_then(Value::as_object_mut) {
        props.retain(|name, _| !SUMMARY_OMITS.contains(&name.as_str()));
    }
    if let Some(required) = summary.get_mut("required").and_then(Value::as_array_mut) {
        required.retain(|name| !SUMMARY_OMITS.iter().any(|o| name == o));
    }
    summary["description"] = json!(format!(
        "a run without {} (`fields=summary`)",
        SUMMARY_OMITS.join(", ")
    ));
    summary
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
    for (path, item) in paths.iter_mut() {
        let Some(item) = item.as_object_mut() else {
            continue;
        };
        let probe = path.ends_with("/healthz") || path.ends_with("/readyz");
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
                    ("403", "the request comes from another site's page (its Origin is not this server's, nor allowed), or names the server by a host it was not given (Host)".to_string()),
                ]);
            } else if !probe {
                refusals.push((
                    "403",
                    "the request names the server by a host it was not given (Host: an address, localhost and the public origins' hosts are answered)".to_string(),
                ));
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

/// The schemas of the request and answer types, with the paths and schemas of `routes`: the
/// document before what is derived after generation (module doc) is written in.
pub(crate) fn generated(routes: utoipa::openapi::OpenApi) -> utoipa::openapi::OpenApi {
    let mut doc = ApiTypes::openapi();
    doc.merge(routes);
    doc
}

/// The OpenAPI 3 document of `routes`, the routers' paths and schemas
/// (`routes::documented`), with what is derived after generation (module doc)
/// written in.
pub(crate) fn spec(routes: utoipa::openapi::OpenApi) -> Value {
    let mut doc = generated(routes);
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
        if let Some(summary) = schemas.get("Run").map(run_summary) {
            schemas.insert("RunSummary".into(), summary);
        }
        write_bounds(schemas);
        schemas.insert("ApiAgent".into(), api_agent_schema());
        schemas.insert(
            "RunConfig".into(),
            crate::tuners::schema::run_config_schema(),
        );
    }
    value
}
