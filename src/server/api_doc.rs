//! The parts of the OpenAPI document that the handlers' `#[utoipa::path]` annotations name:
//! the error answers routes share, the schemas written by hand for documents no Rust type
//! describes, and the query parameters of the queries' hand-written `IntoParams`. A file of
//! its own so that the handlers can name them without importing `openapi`, which
//! imports the handlers' types.

use std::collections::BTreeMap;

use serde_json::json;
use utoipa::openapi::response::Response;
use utoipa::openapi::schema::Schema;
use utoipa::openapi::RefOr;
use utoipa::{IntoResponses, PartialSchema, ToSchema};

use super::error::ErrorBody;
use super::schemas::from_json;

/// An error answer: the API's one error body.
pub(crate) fn error_answer(description: impl Into<String>) -> RefOr<Response> {
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
        pub(crate) struct $name;

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
}

/// A schema written as JSON for a document that no Rust type describes, under its name.
macro_rules! written_schemas {
    ($($(#[$doc:meta])* $name:ident = $schema:literal, $json:expr;)*) => {$(
        $(#[$doc])*
        pub(crate) struct $name;

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
    /// A generation's full record ([`crate::tune::GenerationRecord`], the GA's document).
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
    /// The config form ([`crate::tuners::schema::config_schema`], built as JSON).
    ConfigFormSchema = "ConfigForm", json!({"type": "object", "properties": {
        "defaults": {"type": "object"}, "presets": {"type": "object"}, "groups": {"type": "array", "items": {"type": "object"}},
        "feature_sets": {"type": "array", "items": {"type": "string"}}, "max_core_hours": {"type": "number"}}});
    /// One frame of a run event stream (`text/event-stream`: an `event:` and a `data:` line).
    StreamEventSchema = "StreamEvent", json!({"type": "object", "required": ["event", "data"], "properties": {
        "event": {"type": "string", "enum": ["status", "generation", "end"]},
        "data": {"type": "string", "description": "JSON: the run (status), a generation point with run_id (generation), or run_id and the final status, `deleted` for a deleted run (end)"}}});
}

/// An optional query parameter, for the queries' hand-written `IntoParams`: the handlers read
/// most parameters as text to answer a bad one in the API's error shape, so the query types'
/// fields do not say what the parameters hold.
pub(crate) fn query_param(
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
pub(crate) fn integer() -> utoipa::openapi::ObjectBuilder {
    utoipa::openapi::ObjectBuilder::new().schema_type(utoipa::openapi::Type::Integer)
}

/// The schema of a text parameter.
pub(crate) fn text() -> utoipa::openapi::ObjectBuilder {
    utoipa::openapi::ObjectBuilder::new().schema_type(utoipa::openapi::Type::String)
}
