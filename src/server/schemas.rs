//! Schemas of request fields that the Rust types cannot describe themselves (an agent given in
//! any of its forms, an SPRT as a string or an object, the tuner and preset names, a run's
//! partial config), named by the request types' `schema_with` and placed in the OpenAPI
//! document by `openapi`.

use serde_json::{json, Value};
use utoipa::openapi::schema::{Ref, Schema};
use utoipa::openapi::RefOr;

/// A schema written as JSON; every one here is a literal of this module, checked by the
/// OpenAPI test.
pub(crate) fn from_json(value: Value) -> RefOr<Schema> {
    serde_json::from_value(value).unwrap_or_else(|_| RefOr::Ref(Ref::new("#/invalid")))
}

/// How a request names an agent (`agent`, `south`, `north`): `api_agent_schema`.
pub(crate) fn api_agent() -> RefOr<Schema> {
    RefOr::Ref(Ref::from_schema_name("ApiAgent"))
}

/// An SPRT as a request gives it (`matches::SprtBounds`).
pub(crate) fn sprt() -> RefOr<Schema> {
    from_json(json!({
        "description": "play pairs until a sequential test decides: \"ELO0,ELO1[,ALPHA,BETA]\" or {elo0, elo1, alpha, beta}; not with games",
        "oneOf": [
            {"type": "null"},
            {"type": "string", "example": "0,10"},
            {"type": "object", "required": ["elo0", "elo1"], "additionalProperties": false, "properties": {
                "elo0": {"type": "number"}, "elo1": {"type": "number"},
                "alpha": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 0.5},
                "beta": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 0.5}}}
        ]
    }))
}

/// A run's tuner: one of [`crate::tune::tuner_names`].
pub(crate) fn tuner_name() -> RefOr<Schema> {
    let names = crate::tune::tuner_names();
    from_json(
        json!({"type": ["string", "null"], "enum": names.into_iter().map(Some).chain([None]).collect::<Vec<_>>()}),
    )
}

/// A run's preset: one of any tuner's ([`crate::tune::preset_names`]).
pub(crate) fn preset_name() -> RefOr<Schema> {
    let names: Vec<Option<&str>> = crate::tune::preset_names()
        .into_iter()
        .map(Some)
        .chain([None])
        .collect();
    from_json(json!({"type": ["string", "null"], "enum": names}))
}

/// The status of a tournament or SPRT test (an SPRT test is never `queued`).
pub(crate) fn played_status() -> RefOr<Schema> {
    from_json(json!({
        "type": "string", "enum": ["queued", "running", "finished", "cancelled", "failed"]
    }))
}

/// A run's partial config: [`crate::tuners::schema::run_config_schema`].
pub(crate) fn run_config() -> RefOr<Schema> {
    RefOr::Ref(Ref::from_schema_name("RunConfig"))
}

/// The `SprtReport` schema, named by the answers' `value_type`s:
/// [`crate::matches::sprt::SprtReport`] is a library type that names no schema of its own.
pub(crate) struct SprtReportSchema;

impl utoipa::PartialSchema for SprtReportSchema {
    fn schema() -> RefOr<Schema> {
        sprt_report()
    }
}

impl utoipa::ToSchema for SprtReportSchema {
    fn name() -> std::borrow::Cow<'static, str> {
        std::borrow::Cow::Borrowed("SprtReport")
    }
}

/// An SPRT report as the API shows it.
pub(crate) fn sprt_report() -> RefOr<Schema> {
    from_json(json!({
        "type": "object",
        "required": ["counts", "pairs", "games", "llr", "lower_bound", "upper_bound", "verdict", "estimate", "sprt"],
        "properties": {
            "counts": {"type": "object", "properties": {"counts": {"type": "array", "items": {"type": "integer"}, "minItems": 5, "maxItems": 5, "description": "pairs by A's points: 0, 1/2, 1, 3/2, 2"}}},
            "pairs": {"type": "integer"}, "games": {"type": "integer"}, "llr": {"type": "number"},
            "lower_bound": {"type": "number"}, "upper_bound": {"type": "number"},
            "verdict": {"type": "string", "enum": ["accept_h0", "accept_h1", "inconclusive"]},
            "estimate": {"type": "object"}, "sprt": {"type": "object"}
        }
    }))
}

/// A page of a run's fitness curve: `GenerationPoint`s (`crate::store::GenerationPoint`, a
/// store type that names no schema of its own).
pub(crate) fn generation_points() -> RefOr<Schema> {
    from_json(json!({"type": "array", "items": {"$ref": "#/components/schemas/GenerationPoint"}}))
}
