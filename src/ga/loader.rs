//! The one way a GA config is put together, for `evolve`, the server and config files alike:
//! a preset (or the defaults), then partial configs laid over it in order, then validation.
//! Having one loader means a config file, an API request and command-line flags that say the
//! same thing give the same run.

use serde_json::Value;

use super::config::{ConfigError, GaConfig, PRESETS};

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
    pub fn of_path(path: &std::path::Path) -> Format {
        match path.extension().and_then(|e| e.to_str()) {
            Some("toml") => Format::Toml,
            Some("json") => Format::Json,
            _ => Format::Auto,
        }
    }
}

fn parse_error(reason: String) -> ConfigError {
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

/// Assembles and validates a config: `preset` (or the defaults), then each layer in order.
/// A layer is a partial config object; nested objects merge field by field. A layer that
/// names a `"preset"` starts again from that preset, so a config file that names its preset
/// means the same wherever it is loaded.
pub fn load(preset: Option<&str>, layers: &[&Value]) -> Result<GaConfig, ConfigError> {
    let mut config = match preset {
        Some(name) => GaConfig::preset(name)?,
        None => GaConfig::default(),
    };
    for layer in layers {
        let Value::Object(map) = layer else {
            return Err(parse_error("a GA config must be an object".into()));
        };
        let mut patch = map.clone();
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn layers_apply_in_order_over_the_preset() {
        let file = json!({"population": 12, "depth": 3});
        let flags = json!({"depth": 2});
        let config = load(Some("abrams"), &[&file, &flags]).expect("valid");
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
        let config = load(Some("abrams"), &[&file]).expect("valid");
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
        assert!(load(None, &[&json!([1, 2])]).is_err());
    }

    #[test]
    fn the_result_is_validated() {
        let err = load(None, &[&json!({"population": 0})]).expect_err("population 0");
        assert_eq!(err.field(), "population");
    }
}
