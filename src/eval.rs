//! Evaluation features, named feature sets and published weight presets (DESIGN.md
//! section 3), and the evaluators the searches call at their leaves.
//!
//! Every feature is oriented so that larger is better for the searching side ("me"). A
//! [`WeightedEval`] scores a position as `sum_i w_i * f_i`, in fixed point so that search
//! values compare exactly and ties are ties.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::game::{Position, Rules, Side};

/// Fixed-point unit of heuristic scores: one seed of store difference is `SCALE`.
pub const SCALE: f64 = 1_000_000.0;
/// Any finished game scores beyond this, so a win beats every non-terminal score.
pub const WIN: i64 = 100_000_000_000_000_000;
/// Largest weight magnitude accepted, so that no leaf score can reach [`WIN`].
pub const MAX_WEIGHT: f64 = 1000.0;

/// Score of a finished game with final margin `margin` (mine minus theirs): a bigger win beats a
/// smaller one and any win beats any position that is not yet decided.
#[inline]
pub fn terminal_score(margin: i32) -> i64 {
    match margin.signum() {
        1 => WIN + margin as i64 * SCALE as i64,
        -1 => -WIN + margin as i64 * SCALE as i64,
        _ => 0,
    }
}

/// The scores of finished games: wins and losses lie beyond [`WIN`].
#[inline]
pub fn is_decisive(score: i64) -> bool {
    score.abs() >= WIN
}

/// Scores a position from `me`'s point of view. Called at the leaves of every search.
pub trait Evaluator: Send + Sync {
    /// Score of a position that is not over.
    fn evaluate(&self, pos: &Position, me: Side) -> i64;
}

/// The plain evaluation of Hunter's and Pekar's minimax: store difference.
#[derive(Clone, Copy, Debug, Default)]
pub struct StoreDiff;

impl Evaluator for StoreDiff {
    #[inline]
    fn evaluate(&self, pos: &Position, me: Side) -> i64 {
        pos.store_diff(me) as i64 * SCALE as i64
    }
}

/// One evaluation feature of the catalogue.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Feature {
    Hoard,
    SideSeeds,
    Mobility,
    MyStore,
    RightmostEmpty,
    NegOppStore,
    ExtraTurns,
    StoreDiff,
    WinMargin,
    NegOppMargin,
    SideDiff,
    OverflowDiff,
    CapturableDiff,
}

impl Feature {
    pub const ALL: [Feature; 13] = [
        Feature::Hoard,
        Feature::SideSeeds,
        Feature::Mobility,
        Feature::MyStore,
        Feature::RightmostEmpty,
        Feature::NegOppStore,
        Feature::ExtraTurns,
        Feature::StoreDiff,
        Feature::WinMargin,
        Feature::NegOppMargin,
        Feature::SideDiff,
        Feature::OverflowDiff,
        Feature::CapturableDiff,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Feature::Hoard => "hoard",
            Feature::SideSeeds => "side_seeds",
            Feature::Mobility => "mobility",
            Feature::MyStore => "my_store",
            Feature::RightmostEmpty => "rightmost_empty",
            Feature::NegOppStore => "neg_opp_store",
            Feature::ExtraTurns => "extra_turns",
            Feature::StoreDiff => "store_diff",
            Feature::WinMargin => "win_margin",
            Feature::NegOppMargin => "neg_opp_margin",
            Feature::SideDiff => "side_diff",
            Feature::OverflowDiff => "overflow_diff",
            Feature::CapturableDiff => "capturable_diff",
        }
    }

    pub fn description(self) -> &'static str {
        match self {
            Feature::Hoard => "seeds in my pit farthest from my store (Hunter H1)",
            Feature::SideSeeds => "seeds in all my pits (Hunter H2)",
            Feature::Mobility => "number of my non-empty pits (Hunter H3)",
            Feature::MyStore => "seeds in my store (Hunter H4)",
            Feature::RightmostEmpty => "1 if my pit next to my store is empty (Hunter H5)",
            Feature::NegOppStore => "minus the seeds in the opponent's store (Hunter H6)",
            Feature::ExtraTurns => "my pits whose sowing ends exactly in my store (Hunter H7)",
            Feature::StoreDiff => "my store minus the opponent's (Hunter H8, the blog's S)",
            Feature::WinMargin => "my store - 1.5 x opponent's store once it has 5 (Hunter H9)",
            Feature::NegOppMargin => {
                "-(opponent's store - 1.5 x my store) once mine has 5 (Hunter H10)"
            }
            Feature::SideDiff => "seeds in my pits minus the opponent's (the blog's B)",
            Feature::OverflowDiff => "opponent's overflow minus mine (the blog's O)",
            Feature::CapturableDiff => "largest capture I could make minus the opponent's",
        }
    }

    /// The feature's value for `me`. `rules` matters only for captures.
    pub fn value(self, pos: &Position, me: Side, rules: Rules) -> f64 {
        let opp = me.opponent();
        let m = pos.pits();
        let mine = pos.side_pits(me);
        let my_store = pos.store(me) as f64;
        let opp_store = pos.store(opp) as f64;
        match self {
            Feature::Hoard => mine[0] as f64,
            Feature::SideSeeds => pos.seeds_on_side(me) as f64,
            Feature::Mobility => mine.iter().filter(|&&s| s > 0).count() as f64,
            Feature::MyStore => my_store,
            Feature::RightmostEmpty => (mine[m - 1] == 0) as u8 as f64,
            Feature::NegOppStore => -opp_store,
            Feature::ExtraTurns => {
                let cycle = 2 * m + 1;
                mine.iter()
                    .enumerate()
                    .filter(|&(i, &s)| s > 0 && s as usize % cycle == m - i)
                    .count() as f64
            }
            Feature::StoreDiff => my_store - opp_store,
            Feature::WinMargin => {
                if opp_store >= 5.0 {
                    my_store - 1.5 * opp_store
                } else {
                    0.0
                }
            }
            Feature::NegOppMargin => {
                if my_store >= 5.0 {
                    -(opp_store - 1.5 * my_store)
                } else {
                    0.0
                }
            }
            Feature::SideDiff => pos.seeds_on_side(me) as f64 - pos.seeds_on_side(opp) as f64,
            Feature::OverflowDiff => overflow(pos, opp) as f64 - overflow(pos, me) as f64,
            Feature::CapturableDiff => {
                best_capture(pos, me, rules) as f64 - best_capture(pos, opp, rules) as f64
            }
        }
    }
}

/// Sum over `side`'s pits of the seeds that would pass its store.
fn overflow(pos: &Position, side: Side) -> u32 {
    let m = pos.pits();
    pos.side_pits(side)
        .iter()
        .enumerate()
        .map(|(i, &s)| (s as u32).saturating_sub((m - i) as u32))
        .sum()
}

/// The most seeds one sowing of `side` could capture if `side` were to move now.
pub fn best_capture(pos: &Position, side: Side, rules: Rules) -> u32 {
    if pos.is_game_over() {
        return 0;
    }
    let view = pos.with_side_to_move(side);
    view.legal_moves()
        .into_iter()
        .map(|mv| {
            let mut child = view;
            child.play_unchecked(mv, rules).captured as u32
        })
        .max()
        .unwrap_or(0)
}

impl fmt::Display for Feature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Feature {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Feature::ALL
            .iter()
            .copied()
            .find(|f| f.name() == s)
            .ok_or_else(|| {
                format!(
                    "unknown feature {s:?}; known: {}",
                    Feature::ALL.map(|f| f.name()).join(", ")
                )
            })
    }
}

/// A named feature set with its published weight vectors.
pub struct FeatureSet {
    pub name: &'static str,
    pub features: &'static [Feature],
    pub source: &'static str,
    /// Named weight presets; the first is what `published` means.
    pub presets: &'static [(&'static str, &'static [f64])],
}

pub const FEATURE_SETS: &[FeatureSet] = &[
    FeatureSet {
        name: "hunter10",
        features: &[
            Feature::Hoard,
            Feature::SideSeeds,
            Feature::Mobility,
            Feature::MyStore,
            Feature::RightmostEmpty,
            Feature::NegOppStore,
            Feature::ExtraTurns,
            Feature::StoreDiff,
            Feature::WinMargin,
            Feature::NegOppMargin,
        ],
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
        name: "divilly6",
        features: &[
            Feature::Hoard,
            Feature::SideSeeds,
            Feature::Mobility,
            Feature::MyStore,
            Feature::RightmostEmpty,
            Feature::NegOppStore,
        ],
        source: "Divilly et al., as cited by Pekar et al. (2020), function (3)",
        presets: &[("published", &[0.199, 0.190, 0.371, 1.0, 0.419, 0.566])],
    },
];

impl FeatureSet {
    /// The weights of preset `name`, or an error listing the presets there are.
    pub fn preset(&self, name: &str) -> Result<&'static [f64], String> {
        self.presets
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, w)| *w)
            .ok_or_else(|| {
                let names: Vec<&str> = self.presets.iter().map(|(n, _)| *n).collect();
                format!(
                    "{} has no preset {name:?}; presets: {}",
                    self.name,
                    names.join(", ")
                )
            })
    }
}

/// Looks up a named feature set.
pub fn feature_set(name: &str) -> Option<&'static FeatureSet> {
    FEATURE_SETS.iter().find(|s| s.name == name)
}

/// Parses a feature list: a set name (`hunter10`) or names joined by `+`
/// (`store_diff+side_diff`).
pub fn parse_features(text: &str) -> Result<Vec<Feature>, String> {
    if let Some(set) = feature_set(text) {
        return Ok(set.features.to_vec());
    }
    let features = text
        .split('+')
        .map(|s| s.trim().parse::<Feature>())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| {
            format!(
                "{e} (or a set: {})",
                FEATURE_SETS
                    .iter()
                    .map(|s| s.name)
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })?;
    if features.is_empty() {
        return Err("the feature list is empty".into());
    }
    Ok(features)
}

/// A weighted sum of features, scored from the searching side's point of view.
#[derive(Clone, Debug, PartialEq)]
pub struct WeightedEval {
    terms: Vec<(Feature, f64)>,
    rules: Rules,
    needs: Needs,
    /// Bit `f as u16` for every feature `f` among the terms.
    mask: u16,
    /// The terms are exactly the abrams3 features, in their order.
    abrams3: bool,
}

impl WeightedEval {
    pub fn new(features: &[Feature], weights: &[f64], rules: Rules) -> Result<Self, String> {
        if features.len() != weights.len() {
            return Err(format!(
                "{} features but {} weights",
                features.len(),
                weights.len()
            ));
        }
        if let Some(w) = weights
            .iter()
            .find(|w| !w.is_finite() || w.abs() > MAX_WEIGHT)
        {
            return Err(format!(
                "weight {w} is out of range: weights must be finite and within +-{MAX_WEIGHT}"
            ));
        }
        // Zero weights cost time and change nothing.
        let terms: Vec<(Feature, f64)> = features
            .iter()
            .copied()
            .zip(weights.iter().copied())
            .filter(|&(_, w)| w != 0.0)
            .collect();
        let has = |fs: &[Feature]| terms.iter().any(|(f, _)| fs.contains(f));
        let needs = Needs {
            seeds: has(&[Feature::SideSeeds, Feature::SideDiff]),
            overflow: has(&[Feature::OverflowDiff]),
            counts: has(&[Feature::Mobility, Feature::ExtraTurns]),
            theirs: has(&[Feature::SideDiff, Feature::OverflowDiff]),
        };
        let mask = terms.iter().fold(0, |mask, &(f, _)| mask | 1 << f as u16);
        let abrams3 = terms.iter().map(|&(f, _)| f).eq([
            Feature::StoreDiff,
            Feature::SideDiff,
            Feature::OverflowDiff,
        ]);
        Ok(WeightedEval {
            terms,
            rules,
            needs,
            mask,
            abrams3,
        })
    }

    /// The unscaled weighted sum.
    pub fn raw(&self, pos: &Position, me: Side) -> f64 {
        if self.abrams3 {
            if let Some(sum) = abrams3(&self.terms, pos, me) {
                return sum;
            }
        }
        let values = self.values(pos, me);
        // Same terms in the same order as summing `w * Feature::value`, so the f64 result is
        // bit for bit the same; only the work shared between features is done once.
        self.terms
            .iter()
            .map(|&(f, w)| w * values[f as usize])
            .sum()
    }

    /// [`Feature::value`] of every feature this evaluator uses, indexed by feature; the
    /// tests check that they agree. Straight-line code guarded by the (per evaluator
    /// constant, so well predicted) feature mask is what lets the leaves stay cheap.
    #[inline]
    fn values(&self, pos: &Position, me: Side) -> [f64; Feature::ALL.len()] {
        let mut v = [0.0; Feature::ALL.len()];
        let has = |f: Feature| self.mask & (1 << f as u16) != 0;
        let opp = me.opponent();
        let mine_pits = pos.side_pits(me);
        let mine = PitStats::of(mine_pits, self.needs);
        let theirs = if self.needs.theirs {
            PitStats::of(pos.side_pits(opp), self.needs)
        } else {
            PitStats::default()
        };
        let my_store = pos.store(me) as f64;
        let opp_store = pos.store(opp) as f64;
        let m = mine_pits.len();
        if has(Feature::Hoard) {
            v[Feature::Hoard as usize] = mine_pits[0] as f64;
        }
        if has(Feature::SideSeeds) {
            v[Feature::SideSeeds as usize] = mine.seeds as f64;
        }
        if has(Feature::Mobility) {
            v[Feature::Mobility as usize] = mine.nonempty as f64;
        }
        v[Feature::MyStore as usize] = my_store;
        if has(Feature::RightmostEmpty) {
            v[Feature::RightmostEmpty as usize] = (mine_pits[m - 1] == 0) as u8 as f64;
        }
        v[Feature::NegOppStore as usize] = -opp_store;
        if has(Feature::ExtraTurns) {
            v[Feature::ExtraTurns as usize] = mine.extra_turns as f64;
        }
        v[Feature::StoreDiff as usize] = my_store - opp_store;
        v[Feature::WinMargin as usize] = if opp_store >= 5.0 {
            my_store - 1.5 * opp_store
        } else {
            0.0
        };
        v[Feature::NegOppMargin as usize] = if my_store >= 5.0 {
            -(opp_store - 1.5 * my_store)
        } else {
            0.0
        };
        if has(Feature::SideDiff) {
            v[Feature::SideDiff as usize] = mine.seeds as f64 - theirs.seeds as f64;
        }
        if has(Feature::OverflowDiff) {
            v[Feature::OverflowDiff as usize] = theirs.overflow as f64 - mine.overflow as f64;
        }
        if has(Feature::CapturableDiff) {
            v[Feature::CapturableDiff as usize] =
                Feature::CapturableDiff.value(pos, me, self.rules);
        }
        v
    }
}

/// The blog's S, B and O (the GA's abrams3 set) on a 6-pit board, in one pass over both
/// sides' pits: the GA's depth-7 searches spend much of their time here. `None` for other
/// board sizes.
#[inline]
fn abrams3(terms: &[(Feature, f64)], pos: &Position, me: Side) -> Option<f64> {
    let opp = me.opponent();
    let mine = <&[u16; 6]>::try_from(pos.side_pits(me)).ok()?;
    let theirs = <&[u16; 6]>::try_from(pos.side_pits(opp)).ok()?;
    let (mut my_seeds, mut their_seeds, mut my_overflow, mut their_overflow) = (0, 0, 0, 0);
    for i in 0..6 {
        let to_store = 6 - i as u32;
        my_seeds += mine[i] as u32;
        their_seeds += theirs[i] as u32;
        my_overflow += (mine[i] as u32).saturating_sub(to_store);
        their_overflow += (theirs[i] as u32).saturating_sub(to_store);
    }
    let (my_store, opp_store) = (pos.store(me) as f64, pos.store(opp) as f64);
    // The same products summed in the same order as the general path.
    let products = [
        terms[0].1 * (my_store - opp_store),
        terms[1].1 * (my_seeds as f64 - their_seeds as f64),
        terms[2].1 * (their_overflow as f64 - my_overflow as f64),
    ];
    Some(products.into_iter().sum())
}

/// Sums over one side's pits. All integers, so the features built from them are exactly
/// those of [`Feature::value`].
#[derive(Clone, Copy, Default)]
struct PitStats {
    seeds: u32,
    overflow: u32,
    nonempty: u32,
    extra_turns: u32,
}

/// Which [`PitStats`] some feature of an evaluator reads, so that each leaf computes only
/// those.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Needs {
    seeds: bool,
    overflow: bool,
    counts: bool,
    theirs: bool,
}

impl PitStats {
    /// The common 6-pit board gets fixed-size loops the compiler unrolls.
    #[inline]
    fn of(pits: &[u16], needs: Needs) -> PitStats {
        match <&[u16; 6]>::try_from(pits) {
            Ok(six) => Self::of_array(six, needs),
            Err(_) => Self::of_slice(pits),
        }
    }

    #[inline(always)]
    fn of_array<const M: usize>(pits: &[u16; M], needs: Needs) -> PitStats {
        let mut st = PitStats::default();
        if needs.seeds {
            st.seeds = pits.iter().map(|&s| s as u32).sum();
        }
        if needs.overflow {
            st.overflow = (0..M)
                .map(|i| (pits[i] as u32).saturating_sub((M - i) as u32))
                .sum();
        }
        if needs.counts {
            st.nonempty = pits.iter().map(|&s| (s > 0) as u32).sum();
            st.extra_turns = (0..M).map(|i| (pits[i] as usize == M - i) as u32).sum();
            if pits.iter().any(|&s| s as usize > 2 * M) {
                // A pit of a lap or more may still end in the store: count the slow way.
                st.extra_turns = Self::of_slice(pits).extra_turns;
            }
        }
        st
    }

    fn of_slice(pits: &[u16]) -> PitStats {
        let m = pits.len();
        let cycle = 2 * m + 1;
        let mut st = PitStats::default();
        for (i, &s) in pits.iter().enumerate() {
            let s = s as usize;
            st.seeds += s as u32;
            st.overflow += s.saturating_sub(m - i) as u32;
            st.nonempty += (s > 0) as u32;
            st.extra_turns += (s > 0 && s % cycle == m - i) as u32;
        }
        st
    }
}

impl Evaluator for WeightedEval {
    #[inline]
    fn evaluate(&self, pos: &Position, me: Side) -> i64 {
        round_to_i64(self.raw(pos, me) * SCALE)
    }
}

/// `x.round() as i64` (halves away from zero, saturating), without the libm call that
/// `f64::round` compiles to on baseline x86-64: evaluations round at every leaf.
#[inline]
pub fn round_to_i64(x: f64) -> i64 {
    let t = x as i64;
    // Exact: below 2^53 the truncation and the fraction are both representable, and above
    // it `x` is already an integer (or the cast saturated, as `round() as i64` would).
    let frac = x - t as f64;
    if frac >= 0.5 {
        t.saturating_add(1)
    } else if frac <= -0.5 {
        t.saturating_sub(1)
    } else {
        t
    }
}
