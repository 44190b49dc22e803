//! What a benchmark panel measures, as a run's records keep it: each leader's games against
//! the panel ([`PanelResult`]), the champion they chose ([`Champion`]), and the paired test by
//! which a challenger takes the champion's place ([`beats`]). The panel that plays the games
//! is the genetic algorithm's benchmark, shared by every tuner that measures its leaders.

use serde::{Deserialize, Serialize};

use crate::matches::ScoreEstimate;

/// One-sided 95% z: a challenger must beat the champion by this many standard errors.
const Z_ONE_SIDED_95: f64 = 1.644_853_626_951_472_2;

/// One individual's games against the panel.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PanelResult {
    /// Index of the individual in its generation.
    pub index: usize,
    pub weights: Vec<f64>,
    /// Score against each panel agent, in panel order.
    pub per_agent: Vec<ScoreEstimate>,
    /// Score over the whole panel.
    pub overall: ScoreEstimate,
    /// The individual's points in each pair (0 to 2), panel agent by panel agent: the paired
    /// test compares these with the champion's.
    pub pair_points: Vec<f64>,
    /// Its moves against perfect play, when the benchmark measures agreement.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agreement: Option<Agreement>,
}

/// A leader's moves on the run's agreement set ([`crate::matches::agreement`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Agreement {
    pub positions: usize,
    /// Share of positions where its move is one of the perfect moves, with a 95% interval.
    pub share: f64,
    pub share_ci: (f64, f64),
    /// Mean seeds given away against perfect play a move, with a 95% interval.
    pub mean_loss: f64,
    pub mean_loss_ci: (f64, f64),
}

/// The player a run hands out, and the panel games that made it champion.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Champion {
    pub weights: Vec<f64>,
    /// The generation it was measured in.
    pub generation: u32,
    /// Its fitness in that generation.
    pub fitness: f64,
    pub panel: PanelResult,
}

/// What the panel measured in one generation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BenchmarkRecord {
    /// The panel's agents, as specs.
    pub panel: Vec<String>,
    /// The leaders' results, best fitness first.
    pub leaders: Vec<PanelResult>,
    /// Whether a leader of this generation became champion.
    pub new_champion: bool,
}

/// Whether `challenger` is better than `champion` by a one-sided paired test at 95% on their
/// pair-by-pair points (both played the same panel games).
pub fn beats(challenger: &PanelResult, champion: &PanelResult) -> bool {
    let diffs: Vec<f64> = challenger
        .pair_points
        .iter()
        .zip(&champion.pair_points)
        .map(|(a, b)| a - b)
        .collect();
    let n = diffs.len() as f64;
    if n < 2.0 || challenger.pair_points.len() != champion.pair_points.len() {
        return false;
    }
    let mean = diffs.iter().sum::<f64>() / n;
    let variance = diffs.iter().map(|d| (d - mean).powi(2)).sum::<f64>() / (n - 1.0);
    if variance == 0.0 {
        return mean > 0.0;
    }
    mean / (variance / n).sqrt() > Z_ONE_SIDED_95
}

/// How much better one panel result is than another that played the same panel games: the
/// champion against the first measured leader, say, to show what a run gained.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct PanelGain {
    /// Colour-swapped pairs both played.
    pub pairs: usize,
    /// Difference of the two scores over the panel (0.05 is five points of score), with a
    /// 95% interval from the pair-by-pair differences.
    pub score: f64,
    pub score_ci: (f64, f64),
    /// The same as an Elo difference, measured from the baseline's score.
    pub elo: f64,
    pub elo_ci: (f64, f64),
    /// Whether the one-sided paired test at 95% (the champion rule's, [`beats`]) says better.
    pub better: bool,
}

impl PanelGain {
    /// `ours` over `baseline`; `None` unless both played the same pairs (two or more).
    pub(crate) fn of(ours: &PanelResult, baseline: &PanelResult) -> Option<PanelGain> {
        let n = ours.pair_points.len();
        if n < 2 || baseline.pair_points.len() != n {
            return None;
        }
        // A pair holds two games, so its points over two are its score.
        let diffs: Vec<f64> = ours
            .pair_points
            .iter()
            .zip(&baseline.pair_points)
            .map(|(a, b)| (a - b) / 2.0)
            .collect();
        let mean = diffs.iter().sum::<f64>() / n as f64;
        let variance = diffs.iter().map(|d| (d - mean).powi(2)).sum::<f64>() / (n as f64 - 1.0);
        let half = 1.959_963_984_540_054 * (variance / n as f64).sqrt();
        let base = baseline.pair_points.iter().sum::<f64>() / (2.0 * n as f64);
        let elo_from =
            |d: f64| crate::matches::stats::elo(base + d) - crate::matches::stats::elo(base);
        Some(PanelGain {
            pairs: n,
            score: mean,
            score_ci: (mean - half, mean + half),
            elo: elo_from(mean),
            elo_ci: (elo_from(mean - half), elo_from(mean + half)),
            better: beats(ours, baseline),
        })
    }

    /// "+6.2 points [+2.0, +10.4] of panel score, Elo +44 [+14, +74]".
    pub(crate) fn describe(&self) -> String {
        format!(
            "{:+.1} points [{:+.1}, {:+.1}] of panel score, Elo {:+.0} [{:+.0}, {:+.0}] over {} pairs",
            100.0 * self.score,
            100.0 * self.score_ci.0,
            100.0 * self.score_ci.1,
            self.elo,
            self.elo_ci.0,
            self.elo_ci.1,
            self.pairs
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matches::ScoreEstimate;

    #[test]
    fn a_gain_is_the_paired_difference_with_its_interval() {
        let base = result(&[1.0, 1.0, 0.0, 2.0, 1.0, 1.0]);
        let ours = result(&[2.0, 1.0, 1.0, 2.0, 2.0, 1.0]);
        let gain = PanelGain::of(&ours, &base).unwrap();
        assert_eq!(gain.pairs, 6);
        assert!((gain.score - 0.25).abs() < 1e-12);
        assert!(gain.score_ci.0 < gain.score && gain.score < gain.score_ci.1);
        assert!(gain.elo > 0.0 && gain.elo_ci.0 < gain.elo);
        assert_eq!(gain.better, beats(&ours, &base));
        assert!(PanelGain::of(&ours, &result(&[1.0])).is_none());
        let none = PanelGain::of(&base, &base).unwrap();
        assert_eq!((none.score, none.elo, none.better), (0.0, 0.0, false));
    }

    fn result(points: &[f64]) -> PanelResult {
        PanelResult {
            index: 0,
            weights: vec![],
            per_agent: vec![],
            overall: ScoreEstimate::from_groups(&[]),
            pair_points: points.to_vec(),
            agreement: None,
        }
    }

    #[test]
    fn a_challenger_must_be_better_by_the_paired_test() {
        let champion = result(&[1.0; 40]);
        assert!(
            !beats(&result(&[1.0; 40]), &champion),
            "equal is not better"
        );
        let mut slightly = vec![1.0; 40];
        slightly[0] = 2.0;
        assert!(!beats(&result(&slightly), &champion), "one pair is noise");
        let mut clearly = vec![1.0; 40];
        for p in clearly.iter_mut().take(20) {
            *p = 2.0;
        }
        assert!(beats(&result(&clearly), &champion));
        assert!(!beats(&champion, &result(&clearly)));
        assert!(!beats(&result(&[2.0; 10]), &champion), "different games");
    }
}
