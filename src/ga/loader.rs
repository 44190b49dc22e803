//! The one way a GA config is put together (and, through [`crate::tune::load_tuner`], any tuner's), for `evolve`, the server and config files alike:
//! a preset (or the defaults), then partial configs laid over it in order, then validation.
//! Having one loader means a config file, an API request and command-line flags that say the
//! same thing give the same run.
//!
//! The loader is also where the files a config's agents name are read, under the caller's
//! [`FileAccess`]: the command line reads paths as given, the server only names in its models
//! folder, or none. Every agent list of every layer is resolved before any layer is applied,
//! so a refused file is never opened.

use serde_json::{Map, Value};

use crate::agents::{AgentSpec, FileAccess, Profile};
use crate::ga::config::{GaConfig, PRESETS};
use crate::tune::{agent_error, ConfigError};

/// How a config document is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Json,
    Toml,
    /// JSON when the text starts with `{`, else TOML.
    Auto,
}

impl Format {
    /// The format a file name implies: `.toml` or `.json`, anything else [`Format::Auto`].
    pub(crate) fn of_path(path: &std::path::Path) -> Format {
        match path.extension().and_then(|e| e.to_str()) {
            Some("toml") => Format::Toml,
            Some("json") => Format::Json,
            _ => Format::Auto,
        }
    }
}

pub(crate) fn parse_error(reason: String) -> ConfigError {
    ConfigError::Parse {
        field: String::new(),
        reason,
    }
}

/// Parses a config document into a layer for [`load`], without interpreting its fields.
pub fn parse_document(text: &str, format: Format) -> Result<Value, ConfigError> {
    let format = match format {
        Format::Auto if text.trim_start().starts_with('{') => Format::Json,
        Format::Auto => Format::Toml,
        other => other,
    };
    match format {
        Format::Json => {
            serde_json::from_str(text).map_err(|e| parse_error(format!("not valid JSON: {e}")))
        }
        _ => {
            let table: toml::Table = toml::from_str(text)
                .map_err(|e| parse_error(format!("not valid TOML: {}", e.message())))?;
            serde_json::to_value(table)
                .map_err(|e| parse_error(format!("unsupported TOML value: {e}")))
        }
    }
}

/// The agent lists of a config: (section, field).
const AGENT_LISTS: [(&str, &str); 2] = [("fitness", "opponents"), ("benchmark", "panel")];

/// Resolves the agent lists of a layer into the specs a config stores: `export:` references
/// and inline export documents become the agent they describe, model files are checked (and
/// keep the name they were given), and whatever `files` does not allow is refused, naming the
/// field, before anything is opened.
fn resolve_agents(patch: &mut Map<String, Value>, files: &FileAccess) -> Result<(), ConfigError> {
    for (section, list) in AGENT_LISTS {
        let Some(Value::Array(items)) = patch.get_mut(section).and_then(|s| s.get_mut(list)) else {
            // Absent, or not a list: deserialisation reports the type with its field.
            continue;
        };
        for (i, item) in items.iter_mut().enumerate() {
            let field = format!("{section}.{list}[{i}]");
            *item = resolve_agent(item, &field, files)?;
        }
    }
    Ok(())
}

/// Assembles and validates a config: `preset` (or the defaults), then each layer in order.
/// A layer is a partial config object; nested objects merge field by field. A layer that
/// names a `"preset"` starts again from that preset, so a config file that names its preset
/// means the same wherever it is loaded. The files the layers' agents name are read under
/// `files`.
pub fn load(
    preset: Option<&str>,
    layers: &[&Value],
    files: &FileAccess,
) -> Result<GaConfig, ConfigError> {
    let mut config = match preset {
        Some(name) => GaConfig::preset(name)?,
        None => GaConfig::default(),
    };
    for layer in layers {
        let Value::Object(map) = layer else {
            return Err(parse_error("a GA config must be an object".into()));
        };
        let mut patch = map.clone();
        resolve_agents(&mut patch, files)?;
        match patch.remove("tuner") {
            None => {}
            Some(Value::String(t)) if t == "ga" => {}
            Some(other) => {
                return Err(ConfigError::invalid(
                    "tuner",
                    format!("the tuner is \"ga\"; got {other}"),
                ))
            }
        }
        match patch.remove("preset") {
            None | Some(Value::Null) => {}
            Some(Value::String(name)) => config = GaConfig::preset(&name)?,
            Some(other) => {
                return Err(ConfigError::invalid(
                    "preset",
                    format!(
                        "expected a preset name ({}), got {other}",
                        PRESETS.join(", ")
                    ),
                ))
            }
        }
        if !patch.is_empty() {
            config = config.with_overrides(&Value::Object(patch))?;
        }
    }
    config.validate()?;
    Ok(config)
}

/// Reads and validates one GA config document: [`GaConfig`] fields, all optional, with an
/// optional `"preset"` to start from; the files its agents name are read as given, as the
/// command line reads them.
pub fn load_document(text: &str, format: Format) -> Result<GaConfig, ConfigError> {
    load(None, &[&parse_document(text, format)?], &FileAccess::Any)
}

/// One agent of a layer as the spec a config stores, read under `files`.
pub(crate) fn resolve_agent(
    item: &Value,
    field: &str,
    files: &FileAccess,
) -> Result<Value, ConfigError> {
    let spec =
        AgentSpec::from_json_with(item, Profile::Ga, files).map_err(|e| agent_error(field, &e))?;
    serde_json::to_value(&spec).map_err(|e| ConfigError::invalid(field, e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn layers_apply_in_order_over_the_preset() {
        let file = json!({"population": 12, "depth": 3});
        let flags = json!({"depth": 2});
        let config = load(Some("abrams"), &[&file, &flags], &FileAccess::Any).expect("valid");
        assert_eq!(config.population, 12);
        assert_eq!(config.depth, 2);
        assert_eq!(
            config.generations,
            GaConfig::preset("abrams").unwrap().generations
        );
    }

    #[test]
    fn a_layer_that_names_a_preset_starts_from_it() {
        let file = json!({"preset": "hunter", "generations": 3});
        let config = load(Some("abrams"), &[&file], &FileAccess::Any).expect("valid");
        let hunter = GaConfig::preset("hunter").unwrap();
        assert_eq!(config.population, hunter.population);
        assert_eq!(config.generations, 3);
    }

    #[test]
    fn json_and_toml_documents_give_the_same_layer() {
        let from_json = parse_document(
            r#"{"population": 8, "mutation": {"sigma": 0.05}}"#,
            Format::Auto,
        )
        .expect("JSON");
        let from_toml = parse_document("population = 8\n[mutation]\nsigma = 0.05\n", Format::Auto)
            .expect("TOML");
        assert_eq!(from_json, from_toml);
        assert!(parse_document("population = [", Format::Toml).is_err());
        assert!(load(None, &[&json!([1, 2])], &FileAccess::Any).is_err());
    }

    /// The `main-job` preset is the committed file, read as `evolve --config` reads it.
    #[test]
    fn the_main_job_preset_is_its_config_file() {
        let text = include_str!("../../configs/main-job.toml");
        let file = parse_document(text, Format::Toml).expect("the main job's file");
        let loaded = load(None, &[&file], &FileAccess::Any).expect("valid");
        let preset = load(Some("main-job"), &[], &FileAccess::Any).expect("valid");
        assert_eq!(preset, loaded);
        assert_eq!((preset.population, preset.generations), (24, 100));
    }

    #[test]
    fn the_result_is_validated() {
        let err =
            load(None, &[&json!({"population": 0})], &FileAccess::Any).expect_err("population 0");
        assert_eq!(err.field(), "population");
    }

    #[test]
    fn files_are_refused_before_they_are_opened() {
        // Paths that would hang or fill memory if opened: refused by name first.
        for spec in [
            json!("a3c:/dev/zero"),
            json!("export:/dev/zero"),
            json!({"kind": "a3c", "model": "/etc/shadow"}),
            json!({"kind": "export", "path": "/etc/passwd"}),
            json!({"kind": "heuristic", "from_export": {"format_version": 1, "agent": "a3c:/dev/zero"}}),
        ] {
            for (section, list) in AGENT_LISTS {
                let layer = json!({ section: { list: [spec.clone()] } });
                let err = load(None, &[&layer], &FileAccess::None).expect_err(&layer.to_string());
                let field = format!("{section}.{list}[0]");
                assert!(err.field().starts_with(&field), "{layer}: {err}");
                assert!(err.to_string().contains("not read"), "{layer}: {err}");
            }
        }
        // Without files, plain specs still load.
        let layer = json!({"fitness": {"mode": "opponents", "opponents": ["minimax:2", "a3c"]}});
        let config = load(None, &[&layer], &FileAccess::None).expect("no files named");
        assert_eq!(config.fitness.opponents.len(), 2);
    }

    #[test]
    fn stored_configs_are_read_back_without_opening_files() {
        let mut config = GaConfig::default();
        config.fitness.opponents = vec![AgentSpec::A3c {
            model: Some("/no/such/model.safetensors".into()),
            sample: false,
            ties: crate::agents::Ties::Random,
        }];
        let text = serde_json::to_string(&config).expect("serialises");
        let back: GaConfig = serde_json::from_str(&text).expect("read back without the file");
        assert_eq!(back, config);
    }
}
