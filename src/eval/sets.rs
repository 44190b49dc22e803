//! Named feature sets and the weight vectors their sources published.

use super::Feature;

/// A named feature set with its published weight vectors.
pub struct FeatureSet {
    pub name: &'static str,
    pub features: &'static [Feature],
    pub source: &'static str,
    /// Named weight presets; the first is what `published` means.
    pub presets: &'static [(&'static str, &'static [f64])],
}

// The catalogue opens with Hunter's H1..H10 in his order, and Divilly's six functions are
// Hunter's first six, so both sets are prefixes of it (a test below holds the catalogue to
// that).
const HUNTER10: &[Feature] = Feature::ALL.split_at(10).0;
const DIVILLY6: &[Feature] = Feature::ALL.split_at(6).0;
/// Ahmed's H1 is Hunter's H2 (`side_seeds`); H2-H10 follow the captures in the catalogue.
const AHMED10: &[Feature] = &[
    Feature::SideSeeds,
    Feature::OppSideSeeds,
    Feature::EmptyPits,
    Feature::OppEmptyPits,
    Feature::Singletons,
    Feature::OppSingletons,
    Feature::LoadedPits,
    Feature::LoadedSeeds,
    Feature::OppLoadedPits,
    Feature::OppLoadedSeeds,
];
/// +1 for H1, H3, H5, H7 and H8, -1 for the others (docs/results/reproductions.md).
const AHMED10_INITIAL: &[f64] = &[1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, 1.0, -1.0, -1.0];

pub const FEATURE_SETS: &[FeatureSet] = &[
    FeatureSet {
        name: "hunter10",
        features: HUNTER10,
        source: "Hunter (2021), heuristics H1-H10, Table 3 run 19",
        presets: &[(
            "published",
            &[
                0.225, 0.122, 0.654, 1.0, 0.484, 0.694, 0.918, 0.667, 0.194, 0.297,
            ],
        )],
    },
    FeatureSet {
        name: "abrams3",
        features: &[Feature::StoreDiff, Feature::SideDiff, Feature::OverflowDiff],
        source: "the blog 'Learning to Play Mancala': S, B, O",
        presets: &[
            ("published", &[0.581688, 0.442021, 0.282089]),
            ("published2", &[0.62384, 0.580063, 0.384694]),
            ("published3", &[0.650594, 0.575989, 0.382001]),
        ],
    },
    FeatureSet {
        name: "ahmed10",
        features: AHMED10,
        source: "Ahmed (2016), the ten HUS heuristics H1-H10 on Kalah's one row a side, and his initial weights",
        // The report gives only the weights learning starts from; `published` names them as
        // the other sets' presets do, `initial` says what they are.
        presets: &[("published", AHMED10_INITIAL), ("initial", AHMED10_INITIAL)],
    },
    FeatureSet {
        name: "divilly6",
        features: DIVILLY6,
        source: "Divilly et al., as cited by Pekar et al. (2020), function (3)",
        presets: &[("published", &[0.199, 0.190, 0.371, 1.0, 0.419, 0.566])],
    },
];

impl FeatureSet {
    /// The weights of preset `name`, or an error listing the presets there are.
    pub(crate) fn preset(&self, name: &str) -> Result<&'static [f64], super::EvalError> {
        self.presets
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, w)| *w)
            .ok_or_else(|| {
                let names: Vec<&str> = self.presets.iter().map(|(n, _)| *n).collect();
                super::EvalError(format!(
                    "{} has no preset {name:?}; presets: {}",
                    self.name,
                    names.join(", ")
                ))
            })
    }
}

/// Looks up a named feature set.
pub fn feature_set(name: &str) -> Option<&'static FeatureSet> {
    FEATURE_SETS.iter().find(|s| s.name == name)
}

/// Parses a feature list: a set name (`hunter10`) or names joined by `+`
/// (`store_diff+side_diff`).
pub fn parse_features(text: &str) -> Result<Vec<Feature>, super::EvalError> {
    if let Some(set) = feature_set(text) {
        return Ok(set.features.to_vec());
    }
    let features = text
        .split('+')
        .map(|s| s.trim().parse::<Feature>())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| {
            super::EvalError(format!(
                "{e} (or a set: {})",
                FEATURE_SETS
                    .iter()
                    .map(|s| s.name)
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        })?;
    if features.is_empty() {
        return Err(super::EvalError("the feature list is empty".into()));
    }
    Ok(features)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_published_sets_name_the_features_of_their_sources() {
        let names = |set: &str| -> Vec<&str> {
            feature_set(set)
                .expect("a known set")
                .features
                .iter()
                .map(|f| f.name())
                .collect()
        };
        assert_eq!(
            names("hunter10"),
            [
                "hoard",
                "side_seeds",
                "mobility",
                "my_store",
                "rightmost_empty",
                "neg_opp_store",
                "extra_turns",
                "store_diff",
                "win_margin",
                "neg_opp_margin"
            ]
        );
        assert_eq!(names("divilly6"), names("hunter10")[..6]);
        assert_eq!(
            names("abrams3"),
            ["store_diff", "side_diff", "overflow_diff"]
        );
    }
}
