//! A numeric setting with its range, declared once beside the settings' type: the check of a
//! config, the dashboard form's field (its limits, range text and help) and the test that
//! every setting has a range all read the same [`SettingBound`], so none can drift from the
//! others. It sits at the floor, beside [`super::UserError`], so that every layer that takes
//! settings from a user (the learners, the tuners) declares them the same way.

use serde_json::{json, Value};

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
    /// The form's step.
    pub step: f64,
    /// What the maximum is when it depends on other settings (`population − 1`): the form
    /// says this instead of `max`, the absolute limit, and the config's own check lowers
    /// `max` to the figure of the config at hand (`SettingBound::capped`).
    pub up_to: &'static str,
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
            step: 0.01,
            up_to: "",
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
            step: 1.0,
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

    /// The same, with the form stepping by `step`.
    pub(crate) const fn stepping(self, step: f64) -> Self {
        SettingBound { step, ..self }
    }

    /// The same, its maximum depending on other settings as `text` says (the form shows
    /// it; `max` stays the absolute limit).
    pub(crate) const fn up_to(self, text: &'static str) -> Self {
        SettingBound {
            up_to: text,
            ..self
        }
    }

    /// The same with its maximum lowered to `max`, the figure `up_to` names in a given config.
    pub(crate) fn capped(self, max: f64) -> Self {
        SettingBound {
            max: self.max.min(max),
            up_to: "",
            ..self
        }
    }

    /// The range as the form and the error messages say it.
    pub(crate) fn range(&self) -> String {
        let max = match self.up_to {
            "" => self.max.to_string(),
            text => text.to_string(),
        };
        if self.min_open {
            format!("over {}, up to {max}", self.min)
        } else {
            format!("{} to {max}", self.min)
        }
    }

    pub(crate) fn allows(&self, x: f64) -> bool {
        let above = if self.min_open {
            x > self.min
        } else {
            x >= self.min
        };
        x.is_finite() && above && x <= self.max && (!self.whole || x.fract() == 0.0)
    }

    /// The form's field for this setting under `tuner`'s key.
    pub(crate) fn form_field(&self, tuner: &str) -> Value {
        self.form_field_at(&format!("{tuner}.{}", self.name))
    }

    /// The form's field for this setting at `key`.
    pub(crate) fn form_field_at(&self, key: &str) -> Value {
        // A whole setting's limits as integers, as its values are written.
        let number = |x: f64| match self.whole {
            true => json!(x as i64),
            false => json!(x),
        };
        json!({
            "key": key,
            "kind": if self.whole { "int" } else { "real" },
            "min": number(self.min),
            "max": number(self.max),
            "step": number(self.step),
            "range": match self.optional {
                true => format!("{}, or empty", self.range()),
                false => self.range(),
            },
            "help": self.help,
            "optional": self.optional,
        })
    }

    /// Checks `value`, the setting's value as written: why it is refused, if it is.
    pub(crate) fn check(&self, value: &Value) -> Result<(), OutOfRange> {
        match value.as_f64() {
            Some(x) if self.allows(x) => Ok(()),
            _ if value.is_null() && self.optional => Ok(()),
            _ => Err(OutOfRange {
                whole: self.whole,
                range: self.range(),
                // A number as people write it: 3 rather than JSON's 3.0.
                got: match value.as_f64() {
                    Some(x) if !value.is_u64() && !value.is_i64() => x.to_string(),
                    _ => value.to_string(),
                },
            }),
        }
    }
}

/// A value outside its setting's range: "must be a whole number 0 to 19, got 20".
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("must be {}{range}, got {got}", if *whole { "a whole number " } else { "" })]
pub(crate) struct OutOfRange {
    whole: bool,
    range: String,
    got: String,
}

/// A setting of a config that its bound refuses: its key (dotted: `fitness.racing.leaders`)
/// and why.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{key}: {why}")]
pub(crate) struct Refused {
    pub(crate) key: &'static str,
    pub(crate) why: OutOfRange,
}

/// Checks the settings of a config written as JSON (`written`) against `bounds`, the one walk
/// every config's check goes through. Each setting is read at its dotted key; one whose group
/// is off (racing unset) is not checked, nor one `skip` names; one left out is refused unless
/// it is optional. A maximum that depends on the config (`up_to`) is lowered to `cap`'s figure
/// for its key, so the message names the limit that applies.
pub(crate) fn check_written(
    written: &Value,
    bounds: &[SettingBound],
    cap: impl Fn(&str) -> Option<f64>,
    skip: impl Fn(&str) -> bool,
) -> Result<(), Refused> {
    for bound in bounds {
        if skip(bound.name) {
            continue;
        }
        let Some(value) = setting_at(written, bound.name) else {
            continue;
        };
        let bound = match cap(bound.name) {
            Some(max) => bound.capped(max),
            None => *bound,
        };
        bound.check(value).map_err(|why| Refused {
            key: bound.name,
            why,
        })?;
    }
    Ok(())
}

/// The first key of a flat settings object (`written`) that no bound declares: a setting
/// added without its range, which the check refuses so that none goes unchecked.
pub(crate) fn first_unbounded<'a>(written: &'a Value, bounds: &[SettingBound]) -> Option<&'a str> {
    written
        .as_object()?
        .keys()
        .find(|key| !bounds.iter().any(|b| b.name == key.as_str()))
        .map(String::as_str)
}

/// The setting at dotted `key` (`fitness.racing.leaders`) of a config written as JSON: `None`
/// when a group on the way is absent or empty (racing off: its settings do not apply), JSON
/// `null` when the setting itself is left out.
pub(crate) fn setting_at<'a>(config: &'a Value, key: &str) -> Option<&'a Value> {
    let mut at = config;
    let mut parts = key.split('.').peekable();
    while let Some(part) = parts.next() {
        let object = at.as_object()?;
        match (object.get(part), parts.peek()) {
            (Some(inner), _) => at = inner,
            (None, Some(_)) => return None,
            (None, None) => return Some(&Value::Null),
        }
    }
    Some(at)
}
