//! The export document: a run's best weights as a self-contained, versioned JSON document with
//! everything needed to reproduce the player (an agent spec) and the run (config and seed).

use serde::{Deserialize, Serialize};

use super::config::TunerConfig;
use crate::agents::spec::{FeatureChoice, WeightChoice};
use crate::agents::{AgentSpec, Ties};
use crate::eval::Feature;
use crate::game::Rules;
use crate::search::Depth;
use crate::tune::{BoardConfig, GenerationRecord, GenerationSummary, HallOfFame};

/// The version this build writes and reads.
pub const FORMAT_VERSION: u32 = 1;

/// Why a document could not be made or read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExportError {
    #[error("{field}: {reason}")]
    Invalid { field: String, reason: String },
}

impl crate::game::UserError for ExportError {
    fn field(&self) -> std::borrow::Cow<'_, str> {
        let ExportError::Invalid { field, .. } = self;
        std::borrow::Cow::Borrowed(field)
    }

    fn reason(&self) -> std::borrow::Cow<'_, str> {
        let ExportError::Invalid { reason, .. } = self;
        std::borrow::Cow::Borrowed(reason)
    }
}
inventory::submit! { crate::game::UserErrorKind::of::<ExportError>() }

fn invalid(field: &str, reason: impl Into<String>) -> ExportError {
    ExportError::Invalid {
        field: field.to_string(),
        reason: reason.into(),
    }
}

/// A run's best individual, with its provenance.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExportDocument {
    /// Always [`FORMAT_VERSION`] for documents this build writes.
    pub format_version: u32,
    /// The program and version that wrote the document.
    pub generator: String,
    pub rules: Rules,
    /// The pie rule the individual was tuned under. Written only when on; documents written
    /// before it read as off.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub pie: bool,
    pub board: BoardConfig,
    /// Feature names, in the order of `weights`.
    pub features: Vec<Feature>,
    pub weights: Vec<f64>,
    /// Fitness of the individual in the generation it was evaluated in.
    pub fitness: f64,
    /// That generation (0-based).
    pub generation: u32,
    /// The individual's search depth.
    pub depth: u32,
    pub seed: u64,
    /// The full config of the run that tuned it: a GA run's, or a learning run's.
    pub config: TunerConfig,
    /// A GA run's fitness curve, one entry per generation (empty for other tuners).
    pub history: Vec<GenerationSummary>,
    /// An agent spec that plays exactly as the individual did.
    pub agent: AgentSpec,
}

/// What a run hands out, for a config of any tuner.
impl TunerConfig {
    /// The player a run hands out as of its record `last` (`super::TunerSpec::champion`).
    pub fn champion(&self, last: &GenerationRecord) -> HallOfFame {
        self.spec().champion(last)
    }

    /// The export document of a run from its records, in order.
    pub fn export(&self, records: &[GenerationRecord]) -> Result<ExportDocument, ExportError> {
        let last = records
            .last()
            .ok_or_else(|| invalid("records", "a run with no record has nothing to export"))?;
        let history = records.iter().map(|r| r.summary()).collect();
        self.export_with_history(history, last)
    }

    /// The export document as of the record `last`, for callers that kept only the run's
    /// fitness curve (`history`, one summary a record) rather than every record. Tuners
    /// whose export keeps no curve ([`super::TunerSpec::keeps_curve`]) leave it out.
    pub(crate) fn export_with_history(
        &self,
        history: Vec<GenerationSummary>,
        last: &GenerationRecord,
    ) -> Result<ExportDocument, ExportError> {
        let spec = self.spec();
        let best = spec.champion(last);
        let features = spec
            .features()
            .map_err(|e| invalid("config", e.to_string()))?;
        let agent = AgentSpec::Heuristic {
            features: FeatureChoice::List(features.clone()),
            weights: WeightChoice::Values(best.weights.clone()),
            depth: Depth::Fixed(spec.play_depth()),
            time_ms: None,
            nodes: None,
            ties: Ties::Random,
            egdb: false,
        };
        let doc = ExportDocument {
            format_version: FORMAT_VERSION,
            generator: format!("kalah-tuner {}", env!("CARGO_PKG_VERSION")),
            rules: spec.rules(),
            pie: spec.pie(),
            board: spec.board(),
            features,
            weights: best.weights.clone(),
            fitness: best.fitness,
            generation: best.generation,
            depth: spec.play_depth(),
            seed: spec.seed(),
            config: self.clone(),
            history: if spec.keeps_curve() {
                history
            } else {
                Vec::new()
            },
            agent,
        };
        doc.check()?;
        Ok(doc)
    }

    /// The agent that plays as the run's player as of its record `last`.
    pub(crate) fn agent(&self, last: &GenerationRecord) -> Result<AgentSpec, ExportError> {
        Ok(self.export_with_history(Vec::new(), last)?.agent)
    }
}

impl ExportDocument {
    pub fn to_json_pretty(&self) -> String {
        // Plain data with string keys always serialises.
        serde_json::to_string_pretty(self).expect("an export document serialises")
    }

    /// Reads and checks a document. Documents of another `format_version` are refused with
    /// that field named.
    pub fn from_json(text: &str) -> Result<ExportDocument, ExportError> {
        let value: serde_json::Value = serde_json::from_str(text)
            .map_err(|e| invalid("document", format!("not valid JSON: {e}")))?;
        match value.get("format_version").and_then(|v| v.as_u64()) {
            Some(v) if v == FORMAT_VERSION as u64 => {}
            Some(v) => {
                return Err(invalid(
                    "format_version",
                    format!("unsupported version {v}, expected {FORMAT_VERSION}"),
                ))
            }
            None => {
                return Err(invalid(
                    "format_version",
                    format!("missing: an export document has \"format_version\": {FORMAT_VERSION}"),
                ))
            }
        }
        let doc: ExportDocument = serde_path_to_error::deserialize(value).map_err(|e| {
            let field = e.path().to_string();
            invalid(&field, e.into_inner().to_string())
        })?;
        doc.check()?;
        Ok(doc)
    }

    /// The agent that plays as the exported individual.
    pub fn agent_spec(&self) -> AgentSpec {
        self.agent.clone()
    }

    fn check(&self) -> Result<(), ExportError> {
        if self.features.len() != self.weights.len() {
            return Err(invalid(
                "weights",
                format!(
                    "{} features need {} weights, got {}",
                    self.features.len(),
                    self.features.len(),
                    self.weights.len()
                ),
            ));
        }
        self.agent
            .validate()
            .map_err(|e| invalid("agent", e.to_string()))?;
        let (features, weights) = self
            .agent
            .heuristic_terms()
            .map_err(|e| invalid("agent", e.to_string()))?;
        if features != self.features || weights != self.weights {
            return Err(invalid(
                "agent",
                "the agent's features and weights differ from the document's",
            ));
        }
        Ok(())
    }
}
