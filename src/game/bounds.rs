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
    /// The form's step for a real setting (a whole one steps by 1).
    pub step: f64,
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

    /// The same, with the form stepping by `step`.
    pub(crate) const fn stepping(self, step: f64) -> Self {
        SettingBound { step, ..self }
    }

    /// The range as the form and the error messages say it.
    pub(crate) fn range(&self) -> String {
        if self.min_open {
            format!("over {}, up to {}", self.min, self.max)
        } else {
            format!("{} to {}", self.min, self.max)
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
        let step = if self.whole { 1.0 } else { self.step };
        json!({
            "key": key,
            "kind": if self.whole { "int" } else { "real" },
            "min": self.min,
            "max": self.max,
            "step": step,
            "range": self.range(),
            "help": self.help,
            "optional": self.optional,
        })
    }

    /// Checks `value`, the setting's value as written: why it is refused, if it is.
    pub(crate) fn check(&self, value: &Value) -> Result<(), String> {
        match value.as_f64() {
            Some(x) if self.allows(x) => Ok(()),
            _ if value.is_null() && self.optional => Ok(()),
            _ => {
                let whole = if self.whole { "a whole number " } else { "" };
                Err(format!("must be {whole}{}, got {value}", self.range()))
            }
        }
    }
}
