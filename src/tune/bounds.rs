//! A tuner's numeric settings with their ranges, declared once beside the settings' type: the
//! check of a config, the dashboard form's field (its limits, range text and help) and the
//! test that every setting has a range all read the same table, so none can drift from the
//! others.

use serde::Serialize;
use serde_json::{json, Value};

use super::ConfigError;

/// One numeric setting: its name under its tuner's key, its range and what it does.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SettingBound {
    /// The setting's key in its settings object (`step`, `gain`).
    pub name: &'static str,
    pub min: f64,
    /// The minimum itself is not allowed (a positive share: `(0, 1]`).
    pub min_open: bool,
    pub max: f64,
    /// A whole number.
    pub whole: bool,
    /// May be left out (the tuner then picks it).
    pub optional: bool,
    /// What the setting does, as the form's help says it.
    pub help: &'static str,
}

impl SettingBound {
    /// A real setting in `[min, max]`.
    pub(crate) const fn real(name: &'static str, min: f64, max: f64, help: &'static str) -> Self {
        SettingBound {
            name,
            min,
            min_open: false,
            max,
            whole: false,
            optional: false,
            help,
        }
    }

    /// A real setting in `(min, max]`.
    pub(crate) const fn above(name: &'static str, min: f64, max: f64, help: &'static str) -> Self {
        SettingBound {
            min_open: true,
            ..SettingBound::real(name, min, max, help)
        }
    }

    /// A whole-number setting in `[min, max]`.
    pub(crate) const fn whole(name: &'static str, min: f64, max: f64, help: &'static str) -> Self {
        SettingBound {
            whole: true,
            ..SettingBound::real(name, min, max, help)
        }
    }

    /// The same, and it may be left out.
    pub(crate) const fn optional(self) -> Self {
        SettingBound {
            optional: true,
            ..self
        }
    }

    /// The range as the form and the error messages say it.
    pub(crate) fn range(&self) -> String {
        if self.min_open {
            format!("over {}, up to {}", self.min, self.max)
        } else {
            format!("{} to {}", self.min, self.max)
        }
    }

    fn allows(&self, x: f64) -> bool {
        let above = if self.min_open {
            x > self.min
        } else {
            x >= self.min
        };
        x.is_finite() && above && x <= self.max && (!self.whole || x.fract() == 0.0)
    }

    /// The form's field for this setting under `tuner`'s key.
    pub(crate) fn form_field(&self, tuner: &str) -> Value {
        let step = if self.whole { 1.0 } else { 0.01 };
        json!({
            "key": format!("{tuner}.{}", self.name),
            "kind": if self.whole { "int" } else { "real" },
            "min": self.min,
            "max": self.max,
            "step": step,
            "range": self.range(),
            "help": self.help,
            "optional": self.optional,
        })
    }
}

/// Checks every numeric setting of `settings` (a tuner's settings object, written under
/// `tuner`'s key) against `bounds`; a setting with no bound is refused as well, so a new field
/// cannot go unchecked.
pub(crate) fn check_settings(
    tuner: &str,
    settings: &impl Serialize,
    bounds: &[SettingBound],
) -> Result<(), ConfigError> {
    let value = serde_json::to_value(settings)
        .map_err(|e| ConfigError::invalid(tuner, format!("does not read: {e}")))?;
    let Value::Object(fields) = value else {
        return Err(ConfigError::invalid(tuner, "must be an object"));
    };
    for (name, value) in &fields {
        let field = format!("{tuner}.{name}");
        let Some(bound) = bounds.iter().find(|b| b.name == name) else {
            return Err(ConfigError::invalid(field, "is not a setting with a range"));
        };
        match value.as_f64() {
            Some(x) if bound.allows(x) => {}
            _ => {
                let kind = if bound.whole {
                    "a whole number"
                } else {
                    "a number"
                };
                return Err(ConfigError::invalid(
                    field,
                    format!("must be {kind} {}, got {value}", bound.range()),
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize)]
    struct Settings {
        share: f64,
        rate: f64,
        #[serde(skip_serializing_if = "Option::is_none")]
        count: Option<u32>,
    }

    const BOUNDS: &[SettingBound] = &[
        SettingBound::above("share", 0.0, 1.0, ""),
        SettingBound::real("rate", 0.0, 1.0, ""),
        SettingBound::whole("count", 0.0, 10.0, ""),
    ];

    #[test]
    fn settings_are_checked_against_their_bounds() {
        let ok = Settings {
            share: 1.0,
            rate: 0.0,
            count: Some(10),
        };
        assert!(check_settings("t", &ok, BOUNDS).is_ok());
        for (bad, field) in [
            (
                Settings {
                    share: 0.0,
                    rate: 0.5,
                    count: None,
                },
                "t.share",
            ),
            (
                Settings {
                    share: 0.5,
                    rate: 1.5,
                    count: None,
                },
                "t.rate",
            ),
            (
                Settings {
                    share: 0.5,
                    rate: f64::NAN,
                    count: None,
                },
                "t.rate",
            ),
            (
                Settings {
                    share: 0.5,
                    rate: 0.5,
                    count: Some(11),
                },
                "t.count",
            ),
        ] {
            match check_settings("t", &bad, BOUNDS) {
                Err(ConfigError::Invalid { field: f, .. }) => assert_eq!(f, field),
                other => panic!("{field}: {other:?}"),
            }
        }
        // A setting without a declared range is refused, not waved through.
        assert!(check_settings("t", &ok, &BOUNDS[..2]).is_err());
        assert_eq!(BOUNDS[0].range(), "over 0, up to 1");
        assert_eq!(BOUNDS[1].range(), "0 to 1");
    }
}
