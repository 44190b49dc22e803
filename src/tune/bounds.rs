//! A tuner's settings checked against their declared ranges ([`SettingBound`], at the floor
//! in [`crate::game`]): the check of a config, the dashboard form's field and the test that
//! every setting has a range all read the same table.

pub(crate) use crate::game::SettingBound;
use crate::game::{check_written, first_unbounded};
use serde::Serialize;

use super::ConfigError;

/// Checks every numeric setting of `settings` (a tuner's settings object, written under
/// `tuner`'s key) against `bounds`, through the one walk every config's check takes
/// ([`crate::game::check_written`]); a setting with no bound is refused as well, so a new field
/// cannot go unchecked.
pub(crate) fn check_settings(
    tuner: &str,
    settings: &impl Serialize,
    bounds: &[SettingBound],
) -> Result<(), ConfigError> {
    let written = serde_json::to_value(settings)
        .map_err(|e| ConfigError::invalid(tuner, format!("does not read: {e}")))?;
    if !written.is_object() {
        return Err(ConfigError::invalid(tuner, "must be an object"));
    }
    if let Some(name) = first_unbounded(&written, bounds) {
        return Err(ConfigError::invalid(
            format!("{tuner}.{name}"),
            "is not a setting with a range",
        ));
    }
    check_written(&written, bounds, |_| None, |_| false)
        .map_err(|e| ConfigError::invalid(format!("{tuner}.{}", e.key), e.why.to_string()))
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
        SettingBound::whole("count", 0.0, 10.0, "").optional(),
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
