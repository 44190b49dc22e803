//! [`WeightedEval`]: `sum_i w_i * f_i` in fixed point, with fast paths for the feature sets
//! the GA spends its time in.

use super::{Evaluator, Feature, MAX_WEIGHT, SCALE};
use crate::game::{Position, Rules, Side};

/// A weighted sum of features, scored from the searching side's point of view.
#[derive(Clone, Debug, PartialEq)]
pub struct WeightedEval {
    terms: Vec<(Feature, f64)>,
    rules: Rules,
    needs: Needs,
    /// Bit `f as u32` for every feature `f` among the terms.
    mask: u32,
    /// The terms are exactly the abrams3 features, in their order.
    abrams3: bool,
}

impl WeightedEval {
    pub fn new(
        features: &[Feature],
        weights: &[f64],
        rules: Rules,
    ) -> Result<Self, super::EvalError> {
        if features.len() != weights.len() {
            return Err(super::EvalError(format!(
                "{} features but {} weights",
                features.len(),
                weights.len()
            )));
        }
        if let Some(w) = weights
            .iter()
            .find(|w| !w.is_finite() || w.abs() > MAX_WEIGHT)
        {
            return Err(super::EvalError(format!(
                "weight {w} is out of range: weights must be finite and within +-{MAX_WEIGHT}"
            )));
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
        let mask = terms.iter().fold(0, |mask, &(f, _)| mask | 1 << f as u32);
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
        let has = |f: Feature| self.mask & (1 << f as u32) != 0;
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
        if has(Feature::NegOppCapture) {
            v[Feature::NegOppCapture as usize] = Feature::NegOppCapture.value(pos, me, self.rules);
        }
        if has(Feature::NegExposed) {
            v[Feature::NegExposed as usize] = Feature::NegExposed.value(pos, me, self.rules);
        }
        // Ahmed's pit counts and the late features: cheap enough (or rare enough) to take the
        // general path.
        for f in &Feature::ALL[Feature::OppSideSeeds as usize..] {
            if has(*f) {
                v[*f as usize] = f.value(pos, me, self.rules);
            }
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
