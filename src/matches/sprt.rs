//! The sequential probability ratio test as engine testers run it (docs/explanation/statistics.md): the generalised
//! SPRT on pentanomial counts of colour-swapped pairs.
//!
//! - [`Pentanomial`]: how many pairs A scored 0, ½, 1, 1½ and 2 points in (LL, LD, LW+DD+WL,
//!   DW+WD, WW). Pairs, not games, are the samples: the two games of a pair share an opening,
//!   so they are not independent, and counting pairs keeps the test honest about that.
//! - [`Sprt`]: hypotheses `elo0` (H0) and `elo1` (H1), error rates `alpha` and `beta`; the
//!   log-likelihood ratio of the counts and its bounds ln(β/(1−α)) and ln((1−β)/α).
//! - [`play_sprt`]: plays pairs of a match until the LLR leaves the bounds, or a cap.
//!
//! The LLR compares the most likely pentanomial distributions whose mean pair score is that of
//! elo0 and of elo1 (maximum likelihood under a mean constraint; Van den Bergh's GSPRT). The
//! constrained maximum has the form q_i = p_i / (1 + θ(a_i − s)); θ is the root of a
//! monotone function on the interval where every q_i is positive, found with argmin's
//! BrentRoot.

use argmin::core::{CostFunction, Error as ArgminError, Executor};
use argmin::solver::brent::BrentRoot;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::pairing::schedule;
use super::setup::{MatchError, Setup};
use super::stats::ScoreEstimate;
use crate::agents::{AgentSpec, Budget};

/// A's score per game in each pentanomial outcome (points of the pair over 2).
const PAIR_SCORES: [f64; 5] = [0.0, 0.25, 0.5, 0.75, 1.0];
/// Stands in for an empty outcome, as fishtest does: with a zero count the constrained
/// maximum can sit on the edge of the simplex, where the likelihood ratio is not defined.
const EMPTY_COUNT: f64 = 1e-3;
/// Pairs played between two looks at the LLR; a batch runs in parallel, and the test then
/// reads its pairs in order, so where it stops does not depend on the number of threads.
pub(crate) const BATCH_PAIRS: u64 = 64;

/// Counts of colour-swapped pairs by A's points in the pair: 0, ½, 1, 1½, 2.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pentanomial {
    pub counts: [u64; 5],
}

impl Pentanomial {
    /// Adds a pair in which A took `points` (0, 0.5, 1, 1.5 or 2) of the 2.
    pub(crate) fn add_pair(&mut self, points: f64) {
        let index = (points * 2.0).round().clamp(0.0, 4.0) as usize;
        self.counts[index] += 1;
    }

    pub fn pairs(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// A's score per game with its 95% interval and the Elo differences they imply, with
    /// each pair as one group of two games (the statistics every match report uses).
    pub(crate) fn estimate(&self) -> ScoreEstimate {
        let groups: Vec<Vec<f64>> = self
            .counts
            .iter()
            .zip(PAIR_SCORES)
            .flat_map(|(&c, a)| (0..c).map(move |_| vec![a, a]))
            .collect();
        ScoreEstimate::from_groups(&groups)
    }
}

/// The expected score per game of a player `elo` points stronger (logistic Elo).
pub(crate) fn score_of_elo(elo: f64) -> f64 {
    1.0 / (1.0 + 10f64.powf(-elo / 400.0))
}

/// An SPRT's hypotheses and error rates.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sprt {
    pub elo0: f64,
    pub elo1: f64,
    /// Chance of accepting H1 when H0 holds.
    #[serde(default = "default_error_rate")]
    pub alpha: f64,
    /// Chance of accepting H0 when H1 holds.
    #[serde(default = "default_error_rate")]
    pub beta: f64,
}

fn default_error_rate() -> f64 {
    0.05
}

/// Why an SPRT cannot run.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct SprtError(pub String);

impl crate::game::UserError for SprtError {}
inventory::submit! { crate::game::UserErrorKind::of::<SprtError>() }

/// Where a test stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The LLR fell below the lower bound: A is not elo1 stronger (H0).
    AcceptH0,
    /// The LLR rose above the upper bound: A is more than elo0 stronger (H1).
    AcceptH1,
    /// Still between the bounds (the pair cap was reached).
    Inconclusive,
}

impl Sprt {
    /// Reads `ELO0,ELO1[,ALPHA,BETA]` (alpha and beta 0.05 by default).
    pub fn parse(text: &str) -> Result<Sprt, SprtError> {
        let parts: Vec<&str> = text.split(',').map(str::trim).collect();
        if parts.len() != 2 && parts.len() != 4 {
            return Err(SprtError(format!(
                "expected ELO0,ELO1 or ELO0,ELO1,ALPHA,BETA, got {text:?}"
            )));
        }
        let number = |name: &str, s: &str| {
            s.parse::<f64>()
                .map_err(|_| SprtError(format!("{name}: not a number: {s:?}")))
        };
        let sprt = Sprt {
            elo0: number("elo0", parts[0])?,
            elo1: number("elo1", parts[1])?,
            alpha: parts
                .get(2)
                .map_or(Ok(default_error_rate()), |s| number("alpha", s))?,
            beta: parts
                .get(3)
                .map_or(Ok(default_error_rate()), |s| number("beta", s))?,
        };
        sprt.validate()?;
        Ok(sprt)
    }

    pub(crate) fn validate(&self) -> Result<(), SprtError> {
        let elo_ok = |e: f64| e.is_finite() && e.abs() <= 1000.0;
        if !elo_ok(self.elo0) || !elo_ok(self.elo1) {
            return Err(SprtError("elo0 and elo1 must be -1000 to 1000".into()));
        }
        if self.elo0 >= self.elo1 {
            return Err(SprtError(format!(
                "elo0 must be below elo1, got {} and {}",
                self.elo0, self.elo1
            )));
        }
        for (name, p) in [("alpha", self.alpha), ("beta", self.beta)] {
            if !(p > 0.0 && p < 0.5) {
                return Err(SprtError(format!(
                    "{name} must be above 0 and below 0.5, got {p}"
                )));
            }
        }
        Ok(())
    }

    /// The LLR bounds: accept H0 below the first, H1 above the second.
    pub(crate) fn bounds(&self) -> (f64, f64) {
        (
            (self.beta / (1.0 - self.alpha)).ln(),
            ((1.0 - self.beta) / self.alpha).ln(),
        )
    }

    /// The log-likelihood ratio of H1 against H0 given `counts`.
    pub(crate) fn llr(&self, counts: &Pentanomial) -> f64 {
        if counts.pairs() == 0 {
            return 0.0;
        }
        let regularised: Vec<f64> = counts
            .counts
            .iter()
            .map(|&c| (c as f64).max(EMPTY_COUNT))
            .collect();
        let n: f64 = regularised.iter().sum();
        let p: Vec<f64> = regularised.iter().map(|c| c / n).collect();
        let q0 = constrained_mle(&p, score_of_elo(self.elo0));
        let q1 = constrained_mle(&p, score_of_elo(self.elo1));
        n * p
            .iter()
            .zip(q0.iter().zip(&q1))
            .map(|(pi, (a, b))| pi * (b.ln() - a.ln()))
            .sum::<f64>()
    }

    /// Adds pairs (A's points in each, 0 to 2) to `counts` in order, stopping after the first
    /// that decides: the test is sequential even when its games were played in parallel.
    /// Returns how many pairs it took, the LLR and the verdict after the last of them.
    pub(crate) fn feed(
        &self,
        counts: &mut Pentanomial,
        pair_points: impl IntoIterator<Item = f64>,
    ) -> (u64, f64, Verdict) {
        let mut taken = 0;
        let mut llr = self.llr(counts);
        let mut verdict = self.verdict(llr);
        for points in pair_points {
            if verdict != Verdict::Inconclusive {
                break;
            }
            counts.add_pair(points);
            taken += 1;
            llr = self.llr(counts);
            verdict = self.verdict(llr);
        }
        (taken, llr, verdict)
    }

    /// The verdict for `llr`.
    pub(crate) fn verdict(&self, llr: f64) -> Verdict {
        let (lower, upper) = self.bounds();
        if llr <= lower {
            Verdict::AcceptH0
        } else if llr >= upper {
            Verdict::AcceptH1
        } else {
            Verdict::Inconclusive
        }
    }
}

/// The stationarity condition of the constrained maximum: Σ pᵢdᵢ / (1 + θdᵢ) = 0 with
/// dᵢ = aᵢ − s. Strictly decreasing in θ between its poles.
struct MeanConstraint {
    p: Vec<f64>,
    d: Vec<f64>,
}

impl CostFunction for MeanConstraint {
    type Param = f64;
    type Output = f64;

    fn cost(&self, theta: &f64) -> Result<f64, ArgminError> {
        Ok(self
            .p
            .iter()
            .zip(&self.d)
            .map(|(p, d)| p * d / (1.0 + theta * d))
            .sum())
    }
}

/// The distribution nearest `p` (most likely for the observed counts) whose mean is `s`.
fn constrained_mle(p: &[f64], s: f64) -> Vec<f64> {
    let d: Vec<f64> = PAIR_SCORES.iter().map(|a| a - s).collect();
    let max_d = d.iter().cloned().fold(f64::MIN, f64::max);
    let min_d = d.iter().cloned().fold(f64::MAX, f64::min);
    // θ must keep every 1 + θdᵢ positive: θ in (−1/max d, −1/min d). Stepping in from the
    // poles by a relative 1e-9 keeps the function finite with the signs Brent needs.
    let (low, high) = (-1.0 / max_d * (1.0 - 1e-9), -1.0 / min_d * (1.0 - 1e-9));
    let problem = MeanConstraint {
        p: p.to_vec(),
        d: d.clone(),
    };
    let theta = Executor::new(problem, BrentRoot::new(low, high, 1e-12))
        .configure(|state| state.param(0.0).max_iters(200))
        .run()
        .ok()
        .and_then(|result| result.state().best_param)
        // The function is continuous and changes sign on the interval, so Brent converges;
        // θ = 0 (the unconstrained maximum) is a safe value should it ever not.
        .unwrap_or(0.0);
    p.iter()
        .zip(&d)
        .map(|(p, d)| p / (1.0 + theta * d))
        .collect()
}

/// Where an SPRT match ended.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SprtReport {
    pub a: String,
    pub b: String,
    pub setup: Setup,
    pub sprt: Sprt,
    pub counts: Pentanomial,
    pub pairs: u64,
    pub games: u64,
    pub llr: f64,
    pub lower_bound: f64,
    pub upper_bound: f64,
    pub verdict: Verdict,
    pub estimate: ScoreEstimate,
}

impl SprtReport {
    /// The report of a test of `a` against `b` before its first pair.
    pub(crate) fn start(a: &AgentSpec, b: &AgentSpec, setup: &Setup, sprt: Sprt) -> SprtReport {
        let (lower, upper) = sprt.bounds();
        SprtReport {
            a: a.to_string(),
            b: b.to_string(),
            setup: setup.clone(),
            sprt,
            counts: Pentanomial::default(),
            pairs: 0,
            games: 0,
            llr: 0.0,
            lower_bound: lower,
            upper_bound: upper,
            verdict: Verdict::Inconclusive,
            estimate: Pentanomial::default().estimate(),
        }
    }

    pub(crate) fn to_text(&self) -> String {
        let e = &self.estimate;
        let [ll, ld, even, dw, ww] = self.counts.counts;
        format!(
            "SPRT elo0 {} elo1 {} alpha {} beta {}: {}\n{} against {}: {} pairs ({} games), pentanomial [{ll}, {ld}, {even}, {dw}, {ww}]\nLLR {:.3} (bounds {:.3}, {:.3})\nscore {:.1}% [{:.1}, {:.1}], Elo {:+.1} [{:+.1}, {:+.1}] (95%)\n",
            self.sprt.elo0,
            self.sprt.elo1,
            self.sprt.alpha,
            self.sprt.beta,
            match self.verdict {
                Verdict::AcceptH0 => "H0 accepted",
                Verdict::AcceptH1 => "H1 accepted",
                Verdict::Inconclusive => "inconclusive (pair cap reached)",
            },
            self.a,
            self.b,
            self.pairs,
            self.games,
            self.llr,
            self.lower_bound,
            self.upper_bound,
            100.0 * e.score,
            100.0 * e.ci_low,
            100.0 * e.ci_high,
            e.elo,
            e.elo_low,
            e.elo_high,
        )
    }
}

/// Plays colour-swapped pairs of `a` against `b` (the games of [`super::play_match`] with the
/// same setup, in the same order) until the LLR leaves its bounds or `max_pairs` pairs are
/// played. `progress` hears the report after every batch.
pub fn play_sprt(
    a: &AgentSpec,
    b: &AgentSpec,
    setup: &Setup,
    sprt: Sprt,
    max_pairs: u64,
    progress: impl FnMut(&SprtReport),
) -> Result<SprtReport, MatchError> {
    play_sprt_within(a, b, setup, sprt, max_pairs, progress, &Budget::unlimited())
}

/// [`play_sprt`] within `budget`: [`MatchError::Stopped`] once it is spent or cancelled.
pub fn play_sprt_within(
    a: &AgentSpec,
    b: &AgentSpec,
    setup: &Setup,
    sprt: Sprt,
    max_pairs: u64,
    progress: impl FnMut(&SprtReport),
    budget: &Budget,
) -> Result<SprtReport, MatchError> {
    let games = std::sync::atomic::AtomicU64::new(0);
    play_sprt_counted(a, b, setup, sprt, max_pairs, progress, budget, &games)
}

/// [`play_sprt_within`], adding each game to `games` as it ends: a batch of pairs takes a
/// while, and its games show that the test plays before the batch's LLR is known.
#[allow(clippy::too_many_arguments)]
pub(crate) fn play_sprt_counted(
    a: &AgentSpec,
    b: &AgentSpec,
    setup: &Setup,
    sprt: Sprt,
    max_pairs: u64,
    mut progress: impl FnMut(&SprtReport),
    budget: &Budget,
    games: &std::sync::atomic::AtomicU64,
) -> Result<SprtReport, MatchError> {
    sprt.validate().map_err(|e| MatchError::Invalid {
        field: "sprt",
        reason: e.0,
    })?;
    if max_pairs == 0 || max_pairs > super::setup::MAX_GAMES as u64 / 2 {
        return Err(MatchError::Invalid {
            field: "max_pairs",
            reason: format!(
                "must be 1 to {}, got {max_pairs}",
                super::setup::MAX_GAMES / 2
            ),
        });
    }
    a.validate()?;
    b.validate()?;
    let pairing = setup.pairing(setup.start()?, 0);
    let mut report = SprtReport::start(a, b, setup, sprt);
    while report.pairs < max_pairs && report.verdict == Verdict::Inconclusive {
        let first = report.pairs;
        let batch = BATCH_PAIRS.min(max_pairs - first);
        let points: Vec<f64> = schedule(batch)
            .collect::<Vec<_>>()
            .into_par_iter()
            .map(|(k, a_first)| {
                budget.check_now()?;
                let mut agent_a = a.build_within(setup.rules, budget)?;
                let mut agent_b = b.build_within(setup.rules, budget)?;
                let points = pairing
                    .play(&mut *agent_a, &mut *agent_b, first + k, a_first)
                    .a_points;
                games.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                budget.check_now()?;
                Ok(points)
            })
            .collect::<Result<_, MatchError>>()?;
        let pair_points = points.chunks(2).map(|pair| pair.iter().sum());
        let (taken, llr, verdict) = sprt.feed(&mut report.counts, pair_points);
        report.pairs += taken;
        report.games += 2 * taken;
        report.llr = llr;
        report.verdict = verdict;
        report.estimate = report.counts.estimate();
        progress(&report);
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(c: [u64; 5]) -> Pentanomial {
        Pentanomial { counts: c }
    }

    /// Expected values from an independent implementation of the same formulas (Python,
    /// bisection on θ instead of Brent: `python3 tests/sprt/llr_reference.py`).
    #[test]
    fn llr_matches_values_worked_out_independently() {
        let cases = [
            ([10, 40, 100, 60, 20], 0.0, 10.0, 2.0165049094741194),
            ([5, 30, 120, 35, 10], 0.0, 10.0, 0.8612239405127293),
            ([0, 12, 50, 30, 8], -5.0, 5.0, 2.876500187031817),
            ([100, 200, 300, 250, 150], 0.0, 20.0, 7.369804913517599),
        ];
        for (c, elo0, elo1, expected) in cases {
            let sprt = Sprt {
                elo0,
                elo1,
                alpha: 0.05,
                beta: 0.05,
            };
            let llr = sprt.llr(&counts(c));
            assert!((llr - expected).abs() < 1e-6, "{c:?}: {llr} != {expected}");
        }
    }

    #[test]
    fn bounds_and_verdicts() {
        let sprt = Sprt::parse("0,10").expect("valid");
        let (lower, upper) = sprt.bounds();
        assert!((lower - (0.05f64 / 0.95).ln()).abs() < 1e-12);
        assert!((upper - (0.95f64 / 0.05).ln()).abs() < 1e-12);
        assert_eq!(sprt.verdict(3.0), Verdict::AcceptH1);
        assert_eq!(sprt.verdict(-3.0), Verdict::AcceptH0);
        assert_eq!(sprt.verdict(0.0), Verdict::Inconclusive);
        assert_eq!(sprt.llr(&Pentanomial::default()), 0.0);
        // A one-sided record: many more wins than losses favours H1 strongly.
        assert!(sprt.llr(&counts([0, 0, 10, 0, 200])) > upper);
        assert!(sprt.llr(&counts([200, 0, 10, 0, 0])) < lower);
    }

    #[test]
    fn the_estimate_counts_pairs_as_groups() {
        let e = counts([10, 40, 100, 60, 20]).estimate();
        assert_eq!(e.games, 460);
        assert!((e.score - 0.5434782608695652).abs() < 1e-12);
        assert!((e.elo - 30.288285575247322).abs() < 1e-6);
        assert!(e.elo_low < e.elo && e.elo < e.elo_high);
    }

    #[test]
    fn bad_settings_are_refused_with_the_reason() {
        for (text, needle) in [
            ("10,0", "below"),
            ("0", "expected"),
            ("0,10,0.6,0.05", "alpha"),
            ("0,x", "elo1"),
        ] {
            let e = Sprt::parse(text).expect_err(text);
            assert!(e.0.contains(needle), "{text}: {e}");
        }
    }
}
