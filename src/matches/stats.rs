//! Honest summaries of match results: scores with 95% confidence intervals and Elo
//! differences.

use serde::{Deserialize, Serialize};

/// z for a two-sided 95% interval.
const Z95: f64 = 1.959_963_984_540_054;

/// A score (mean points per game, win 1, draw 0.5, loss 0) with a 95% confidence interval.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct ScoreEstimate {
    pub games: u64,
    pub score: f64,
    pub ci_low: f64,
    pub ci_high: f64,
    /// Elo difference implied by the score, with the interval mapped the same way.
    pub elo: f64,
    pub elo_low: f64,
    pub elo_high: f64,
}

/// Wilson score interval for a proportion `p` observed over `n` trials.
pub fn wilson(p: f64, n: f64) -> (f64, f64) {
    if n <= 0.0 {
        return (0.0, 1.0);
    }
    let z2 = Z95 * Z95;
    let centre = (p + z2 / (2.0 * n)) / (1.0 + z2 / n);
    let half = Z95 / (1.0 + z2 / n) * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    ((centre - half).max(0.0), (centre + half).min(1.0))
}

/// Elo difference for a score, clamped so that 0% and 100% stay finite (±1200).
pub(crate) fn elo(score: f64) -> f64 {
    let s = score.clamp(0.001, 0.999);
    -400.0 * (1.0 / s - 1.0).log10()
}

impl ScoreEstimate {
    /// Estimates from groups of games: each group is the points of games that belong together
    /// (the two colour-swapped games of one opening), so correlation inside a pair is counted.
    ///
    /// The interval is the wider of two: the Wilson interval over games (never empty, even at
    /// 0% or 100%) and the normal interval over group means (which sees the correlation of
    /// paired games). Taking the wider keeps it honest both for small samples and for
    /// deterministic agents whose paired games repeat.
    pub(crate) fn from_groups(groups: &[Vec<f64>]) -> ScoreEstimate {
        let games: usize = groups.iter().map(|g| g.len()).sum();
        let points: f64 = groups.iter().flatten().sum();
        let score = if games == 0 {
            0.5
        } else {
            points / games as f64
        };
        let (mut low, mut high) = wilson(score, games as f64);
        let means: Vec<f64> = groups
            .iter()
            .filter(|g| !g.is_empty())
            .map(|g| g.iter().sum::<f64>() / g.len() as f64)
            .collect();
        if means.len() >= 2 {
            let n = means.len() as f64;
            let mean = means.iter().sum::<f64>() / n;
            let var = means.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
            let half = Z95 * (var / n).sqrt();
            low = low.min((score - half).max(0.0));
            high = high.max((score + half).min(1.0));
        }
        ScoreEstimate {
            games: games as u64,
            score,
            ci_low: low,
            ci_high: high,
            elo: elo(score),
            elo_low: elo(low),
            elo_high: elo(high),
        }
    }

    /// `53.1% [50.0, 56.2]`.
    pub(crate) fn display_percent(&self) -> String {
        format!(
            "{:.1}% [{:.1}, {:.1}]",
            100.0 * self.score,
            100.0 * self.ci_low,
            100.0 * self.ci_high
        )
    }
}

/// Wins, draws and losses of one side of a pairing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tally {
    pub wins: u64,
    pub draws: u64,
    pub losses: u64,
}

impl Tally {
    pub(crate) fn add(&mut self, points: f64) {
        if points > 0.75 {
            self.wins += 1;
        } else if points > 0.25 {
            self.draws += 1;
        } else {
            self.losses += 1;
        }
    }

    pub fn games(&self) -> u64 {
        self.wins + self.draws + self.losses
    }

    /// Fraction of games won (draws are not wins), as in Hunter's Table 1.
    pub fn win_rate(&self) -> f64 {
        if self.games() == 0 {
            0.0
        } else {
            self.wins as f64 / self.games() as f64
        }
    }

    /// 95% Wilson interval of the win rate.
    pub(crate) fn win_rate_ci(&self) -> (f64, f64) {
        wilson(self.win_rate(), self.games() as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wilson_interval_contains_the_estimate_and_shrinks_with_n() {
        let (lo, hi) = wilson(0.6, 100.0);
        assert!(lo < 0.6 && 0.6 < hi);
        let (lo2, hi2) = wilson(0.6, 10_000.0);
        assert!(hi2 - lo2 < hi - lo);
        // Known value: p = 0.5, n = 100 gives about [0.404, 0.596].
        let (lo, hi) = wilson(0.5, 100.0);
        assert!((lo - 0.4038).abs() < 1e-3 && (hi - 0.5962).abs() < 1e-3);
    }

    #[test]
    fn a_perfect_score_still_has_a_lower_bound_below_one() {
        let groups = vec![vec![1.0, 1.0]; 10];
        let est = ScoreEstimate::from_groups(&groups);
        assert_eq!(est.score, 1.0);
        assert!(est.ci_low < 0.9);
        assert_eq!(est.ci_high, 1.0);
    }

    #[test]
    fn elo_is_zero_at_even_and_symmetric() {
        assert!(elo(0.5).abs() < 1e-9);
        assert!((elo(0.75) + elo(0.25)).abs() < 1e-9);
        assert!((elo(0.75) - 190.85).abs() < 0.1);
    }
}
