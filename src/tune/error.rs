//! [`ConfigError`]: the one error of a tuner's config, whichever tuner: a field that does not
//! parse, a value out of range, a record that does not belong to the run.

use std::borrow::Cow;

use crate::agents::SpecError;
use crate::game::UserError;

/// A configuration that cannot be read or would not run, with the field at fault.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// A value out of range or inconsistent with another; `field` is a dotted path such as
    /// `selection.k`.
    #[error("{field}: {reason}")]
    Invalid { field: String, reason: String },
    /// The document does not parse (syntax, unknown field, wrong type); `field` is the dotted
    /// path where that was found, empty when the problem is the text itself.
    #[error("{}{reason}", if field.is_empty() { String::new() } else { format!("{field}: ") })]
    Parse { field: String, reason: String },
    /// A saved generation record that does not belong to this configuration.
    #[error("cannot resume: {0}")]
    Resume(String),
}

impl ConfigError {
    pub(crate) fn invalid(field: impl Into<String>, reason: impl Into<String>) -> Self {
        ConfigError::Invalid {
            field: field.into(),
            reason: reason.into(),
        }
    }

    /// Reads `value` as a `T`; a failure names the field at fault as a dotted path after
    /// `prefix` (a tuner's settings sit under its name). Every config reader goes through here
    /// so that the API and the command line name fields the same way.
    pub(crate) fn read<T: serde::de::DeserializeOwned>(
        value: serde_json::Value,
        prefix: &str,
    ) -> Result<T, ConfigError> {
        serde_path_to_error::deserialize::<_, T>(value).map_err(|e| {
            let path = e.path().to_string();
            let mut field = match (prefix, path.as_str()) {
                (prefix, ".") => prefix.to_string(),
                ("", path) => path.to_string(),
                (prefix, path) => format!("{prefix}.{path}"),
            };
            let mut reason = e.into_inner().to_string();
            // List fields with their own checks (opponents) report the element as "[i]: ...";
            // fold the index into the path.
            if let Some((index, rest)) = reason
                .strip_prefix('[')
                .and_then(|r| r.split_once("]: "))
                .filter(|(i, _)| i.bytes().all(|b| b.is_ascii_digit()))
            {
                field = format!("{field}[{index}]");
                reason = rest.to_string();
            }
            ConfigError::Parse { field, reason }
        })
    }

    /// The dotted path of the field at fault (empty for syntax errors and resume mismatches).
    pub fn field(&self) -> &str {
        match self {
            ConfigError::Invalid { field, .. } | ConfigError::Parse { field, .. } => field,
            ConfigError::Resume(_) => "",
        }
    }
}

inventory::submit! { crate::game::UserErrorKind::of::<ConfigError>() }

impl UserError for ConfigError {
    fn field(&self) -> Cow<'_, str> {
        Cow::Borrowed(ConfigError::field(self))
    }

    fn reason(&self) -> Cow<'_, str> {
        match self {
            ConfigError::Invalid { reason, .. } | ConfigError::Parse { reason, .. } => {
                Cow::Borrowed(reason)
            }
            ConfigError::Resume(reason) => Cow::Borrowed(reason),
        }
    }
}

/// A spec error of the config's agent at `prefix` (e.g. `fitness.opponents[2]`), naming the
/// spec's own field under it.
pub(crate) fn agent_error(prefix: &str, e: &SpecError) -> ConfigError {
    let field = match e.field.as_str() {
        "" | "json" => prefix.to_string(),
        name => format!("{prefix}.{name}"),
    };
    ConfigError::invalid(field, format!("{}: {}", e.spec, e.reason))
}
