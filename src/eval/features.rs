//! The evaluation features of the catalogue (docs/reference/agents.md), each oriented so that
//! larger is better for the searching side, except Ahmed's `ahmed10` (docs/results/reproductions.md):
//! the report counts the opponent's pits as they are and puts the sign in the weight.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::game::{Position, Rules, Side};

/// One evaluation feature of the catalogue.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
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
    NegOppCapture,
    NegExposed,
    OppSideSeeds,
    EmptyPits,
    OppEmptyPits,
    Singletons,
    OppSingletons,
    LoadedPits,
    LoadedSeeds,
    OppLoadedPits,
    OppLoadedSeeds,
    SideDiffLate,
    CapturableDiffLate,
    MobilityLate,
    ExtraTurnsLate,
}

impl Feature {
    pub const ALL: [Feature; 28] = [
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
        Feature::NegOppCapture,
        Feature::NegExposed,
        Feature::OppSideSeeds,
        Feature::EmptyPits,
        Feature::OppEmptyPits,
        Feature::Singletons,
        Feature::OppSingletons,
        Feature::LoadedPits,
        Feature::LoadedSeeds,
        Feature::OppLoadedPits,
        Feature::OppLoadedSeeds,
        Feature::SideDiffLate,
        Feature::CapturableDiffLate,
        Feature::MobilityLate,
        Feature::ExtraTurnsLate,
    ];

    pub(crate) fn name(self) -> &'static str {
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
            Feature::NegOppCapture => "neg_opp_capture",
            Feature::NegExposed => "neg_exposed",
            Feature::OppSideSeeds => "opp_side_seeds",
            Feature::EmptyPits => "empty_pits",
            Feature::OppEmptyPits => "opp_empty_pits",
            Feature::Singletons => "singletons",
            Feature::OppSingletons => "opp_singletons",
            Feature::LoadedPits => "loaded_pits",
            Feature::LoadedSeeds => "loaded_seeds",
            Feature::OppLoadedPits => "opp_loaded_pits",
            Feature::OppLoadedSeeds => "opp_loaded_seeds",
            Feature::SideDiffLate => "side_diff_late",
            Feature::CapturableDiffLate => "capturable_diff_late",
            Feature::MobilityLate => "mobility_late",
            Feature::ExtraTurnsLate => "extra_turns_late",
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
            Feature::NegOppCapture => {
                "minus the largest capture the opponent could make if it moved now"
            }
            Feature::NegExposed => {
                "minus the seeds in my pits that some opponent move would capture"
            }
            Feature::OppSideSeeds => "seeds in the opponent's pits (Ahmed H2, weighted -1)",
            Feature::EmptyPits => "my empty pits (Ahmed H3)",
            Feature::OppEmptyPits => "the opponent's empty pits (Ahmed H4, weighted -1)",
            Feature::Singletons => "my pits holding exactly one seed (Ahmed H5)",
            Feature::OppSingletons => {
                "the opponent's pits holding exactly one seed (Ahmed H6, weighted -1)"
            }
            Feature::LoadedPits => "my pits holding more than one seed (Ahmed H7)",
            Feature::LoadedSeeds => "the seeds in my pits holding more than one (Ahmed H8)",
            Feature::OppLoadedPits => {
                "the opponent's pits holding more than one seed (Ahmed H9, weighted -1)"
            }
            Feature::OppLoadedSeeds => {
                "the seeds in the opponent's pits holding more than one (Ahmed H10, weighted -1)"
            }
            Feature::SideDiffLate => "side_diff times the share of all seeds in the stores",
            Feature::CapturableDiffLate => {
                "capturable_diff times the share of all seeds in the stores"
            }
            Feature::MobilityLate => "mobility times the share of all seeds in the stores",
            Feature::ExtraTurnsLate => "extra_turns times the share of all seeds in the stores",
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
            Feature::NegOppCapture => -(best_capture(pos, opp, rules) as f64),
            Feature::NegExposed => -(exposed_seeds(pos, me, rules) as f64),
            Feature::OppSideSeeds => pos.seeds_on_side(opp) as f64,
            Feature::EmptyPits => count(mine, |s| s == 0),
            Feature::OppEmptyPits => count(pos.side_pits(opp), |s| s == 0),
            Feature::Singletons => count(mine, |s| s == 1),
            Feature::OppSingletons => count(pos.side_pits(opp), |s| s == 1),
            Feature::LoadedPits => count(mine, |s| s > 1),
            Feature::LoadedSeeds => loaded_seeds(mine),
            Feature::OppLoadedPits => count(pos.side_pits(opp), |s| s > 1),
            Feature::OppLoadedSeeds => loaded_seeds(pos.side_pits(opp)),
            Feature::SideDiffLate => Feature::SideDiff.value(pos, me, rules) * lateness(pos),
            Feature::CapturableDiffLate => {
                Feature::CapturableDiff.value(pos, me, rules) * lateness(pos)
            }
            Feature::MobilityLate => Feature::Mobility.value(pos, me, rules) * lateness(pos),
            Feature::ExtraTurnsLate => Feature::ExtraTurns.value(pos, me, rules) * lateness(pos),
        }
    }
}

/// The share of all seeds already in the stores: 0 at the start, 1 when the game ends. The
/// `_late` features scale a feature by it, so that a linear evaluation can weigh the feature
/// differently early and late (a tapered evaluation): the weight of `f` plus that of `f_late`
/// is what `f` counts for in the last moves. Symmetric in the two sides, so the late features
/// keep their feature's sign under a swap.
fn lateness(pos: &Position) -> f64 {
    let stored = pos.store(Side::South) as f64 + pos.store(Side::North) as f64;
    let total = stored + pos.seeds_in_pits() as f64;
    if total == 0.0 {
        0.0
    } else {
        stored / total
    }
}

/// How many of `pits` hold a number of seeds that `test` accepts.
fn count(pits: &[u16], test: impl Fn(u16) -> bool) -> f64 {
    pits.iter().filter(|&&s| test(s)).count() as f64
}

/// The seeds in those of `pits` that hold more than one.
fn loaded_seeds(pits: &[u16]) -> f64 {
    pits.iter()
        .filter(|&&s| s > 1)
        .map(|&s| s as u32)
        .sum::<u32>() as f64
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

/// The most seeds one sowing of `side` could capture if `side` were to move now (the
/// capturing seed included, as [`crate::game::MoveOutcome::captured`] counts them).
pub fn best_capture(pos: &Position, side: Side, rules: Rules) -> u32 {
    let (mine, theirs) = (pos.side_pits(side), pos.side_pits(side.opponent()));
    // The leaves of the tuned players ask this twice each: on the common 6-pit board fixed
    // lengths let the compiler unroll the pits, with no bounds checks and no iterator state.
    if let (Ok(mine), Ok(theirs)) = (<&[u16; 6]>::try_from(mine), <&[u16; 6]>::try_from(theirs)) {
        let empty = |pits: &[u16; 6]| pits.iter().fold(0, |any, &s| any | s) == 0;
        if empty(mine) || empty(theirs) {
            return 0;
        }
        let mut best = 0;
        for pit in 0..6 {
            if let Some((_, captured)) = capture_from(mine, theirs, pit, rules) {
                best = best.max(captured);
            }
        }
        return best;
    }
    if pos.is_game_over() {
        return 0;
    }
    (0..mine.len())
        .filter_map(|pit| capture_from(mine, theirs, pit, rules))
        .map(|(_, captured)| captured)
        .max()
        .unwrap_or(0)
}

/// The seeds of `side`'s pits that the opponent could capture with one move if it moved now:
/// each pit some capture would empty counts once, with the most seeds a capture of it takes
/// (a sowing that laps the board may add to the pit first). A3C's inputs weigh this "what do
/// I leave hanging" more than the single largest threat that `capturable_diff` sees.
pub fn exposed_seeds(pos: &Position, side: Side, rules: Rules) -> u32 {
    if pos.is_game_over() {
        return 0;
    }
    let (mine, theirs) = (pos.side_pits(side), pos.side_pits(side.opponent()));
    let m = mine.len();
    let mut taken = [0u32; crate::game::MAX_PITS];
    for pit in 0..m {
        if let Some((landing, captured)) = capture_from(theirs, mine, pit, rules) {
            // The capture takes the landing seed and the seeds of our pit facing it.
            let ours = m - 1 - landing;
            taken[ours] = taken[ours].max(captured - 1);
        }
    }
    taken.iter().sum()
}

/// What sowing pit `pit` (0-based) of `mine`, the mover's pits, would capture, worked out
/// without playing the move, since the capture features ask it of every pit of both sides at
/// every leaf: the landing pit (the mover's, 0-based) and the seeds captured, the capturing one
/// included. `None` when the move captures nothing. `theirs` is the opponent's pits in their
/// own order, so the pit facing the mover's pit `j` is `theirs[m - 1 - j]`.
///
/// Along the mover's cycle of `2m + 1` cells (its pits, its store, the opponent's pits) a
/// move of `s` seeds from pit `i` ends at `i + s`. Its last seed can leave a pit holding one
/// seed only if no earlier seed of the move fell there, so only moves of at most one lap
/// capture: ending on the mover's side without wrapping (`i + s < m`, the opponent's pits
/// untouched), or after passing the opponent's pits once (`i + s > 2m`, each of them one seed
/// richer), the lifted pit itself included when `s` is exactly a lap. `tests/eval.rs` checks
/// this against playing the move.
#[inline(always)]
fn capture_from(mine: &[u16], theirs: &[u16], pit: usize, rules: Rules) -> Option<(usize, u32)> {
    let m = mine.len();
    let seeds = mine[pit] as usize;
    let end = pit + seeds;
    let (landing, passed) = if seeds == 0 || seeds > 2 * m + 1 {
        return None;
    } else if end < m {
        (end, 0)
    } else if end > 2 * m {
        (end - (2 * m + 1), 1)
    } else {
        return None;
    };
    if landing != pit && mine[landing] != 0 {
        return None;
    }
    let facing = theirs[m - 1 - landing] as u32 + passed;
    (facing > 0 || rules == Rules::EmptyCapture).then_some((landing, facing + 1))
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
