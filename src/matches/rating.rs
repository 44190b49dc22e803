//! Ratings of many players on one Elo scale from the games they played against each other:
//! a Bradley-Terry fit with 95% intervals, and the choice of the next pairing that narrows the
//! intervals most. The ladder (docs/explanation/statistics.md#the-ladder) is its user.
//!
//! The model: player i scores against player j with probability
//! `p_ij = 1 / (1 + 10^((r_j - r_i) / 400))`, a draw counting half. The unit of evidence is a
//! colour-swapped pair of games from one opening, scored 0, ¼, ½, ¾ or 1: the two games of a
//! pair are not independent (the opening favours one side), so counting them as one trial
//! keeps the intervals honest rather than too narrow.
//!
//! One player is pinned at 0 (the ladder's reference anchor), and every other player is given
//! one virtual drawn trial against it, the prior BayesElo uses: without it a player who won
//! every pair would have no finite rating. The ratings are the maximum of that posterior,
//! found by Newton's method with step halving (the way logistic models are fitted: the
//! log posterior is strictly concave, so it converges in a few steps, and every loop is
//! bounded); the intervals come from the inverse of its Hessian (the observed information),
//! so they widen with few games and shrink as games come in. argmin's L-BFGS is not used
//! here: its line search runs without an iteration bound, and near the optimum, where
//! rounding noise decides the Wolfe conditions, it can loop for ever (a ladder's fit did).
//!
//! tests/ladder/bt_reference.py fits the same model independently (Hunter's MM algorithm, in
//! Python) on a fixed set of trials; a unit test holds the two within 0.1 Elo.

use serde::Serialize;

/// Elo points per natural-log unit of the logistic model.
const ELO_PER_NAT: f64 = 400.0 / std::f64::consts::LN_10;
/// z for a two-sided 95% interval.
const Z95: f64 = 1.959_963_984_540_054;
/// Weight of the virtual drawn trial each player has against the pinned one.
const PRIOR_TRIALS: f64 = 1.0;

/// One trial between two players: `a_score` is a's share of the points, 0 to 1.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Trial {
    pub a: usize,
    pub b: usize,
    pub a_score: f64,
}

/// One player's fitted rating.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub(crate) struct Rating {
    /// Elo, relative to the pinned player.
    pub elo: f64,
    /// The 95% interval's half width, in Elo (0 for the pinned player).
    pub margin: f64,
    /// Trials the player took part in (the prior's not counted).
    pub trials: u64,
}

/// The fitted ratings, with the covariance the next pairing is chosen from.
#[derive(Clone, Debug)]
pub(crate) struct Ratings {
    pub players: Vec<Rating>,
    pinned: usize,
    /// Covariance of the free players' ratings in natural units, in player order without
    /// the pinned one.
    covariance: Vec<Vec<f64>>,
}

/// Why ratings could not be fitted.
#[derive(Debug, thiserror::Error, PartialEq)]
pub(crate) enum RatingError {
    #[error("the pinned player {pinned} is not one of the {players} players")]
    PinnedOutOfRange { pinned: usize, players: usize },
    #[error("trial {index} names player {player}, but there are {players} players")]
    PlayerOutOfRange {
        index: usize,
        player: usize,
        players: usize,
    },
    #[error("trial {index} is a player against itself")]
    SelfPlay { index: usize },
    #[error("trial {index} scores {score}: a score is 0 to 1")]
    BadScore { index: usize, score: f64 },
}

/// The points and trials between each two players, the prior included.
struct Tally {
    /// `points[i][j]`: i's points against j.
    points: Vec<Vec<f64>>,
    trials: Vec<Vec<f64>>,
}

impl Tally {
    fn new(players: usize, pinned: usize, trials: &[Trial]) -> Result<Tally, RatingError> {
        let mut points = vec![vec![0.0; players]; players];
        let mut counts = vec![vec![0.0; players]; players];
        for (index, t) in trials.iter().enumerate() {
            for player in [t.a, t.b] {
                if player >= players {
                    return Err(RatingError::PlayerOutOfRange {
                        index,
                        player,
                        players,
                    });
                }
            }
            if t.a == t.b {
                return Err(RatingError::SelfPlay { index });
            }
            if !(0.0..=1.0).contains(&t.a_score) {
                return Err(RatingError::BadScore {
                    index,
                    score: t.a_score,
                });
            }
            points[t.a][t.b] += t.a_score;
            points[t.b][t.a] += 1.0 - t.a_score;
            counts[t.a][t.b] += 1.0;
            counts[t.b][t.a] += 1.0;
        }
        for i in (0..players).filter(|&i| i != pinned) {
            points[i][pinned] += PRIOR_TRIALS / 2.0;
            points[pinned][i] += PRIOR_TRIALS / 2.0;
            counts[i][pinned] += PRIOR_TRIALS;
            counts[pinned][i] += PRIOR_TRIALS;
        }
        Ok(Tally {
            points,
            trials: counts,
        })
    }
}

/// The negative log posterior over the free players' ratings (natural units).
#[derive(Clone)]
struct Posterior<'a> {
    tally: &'a Tally,
    pinned: usize,
}

impl Posterior<'_> {
    /// Every player's rating, the pinned one's 0 put back in.
    fn all(&self, free: &[f64]) -> Vec<f64> {
        let mut all = Vec::with_capacity(free.len() + 1);
        all.extend_from_slice(&free[..self.pinned]);
        all.push(0.0);
        all.extend_from_slice(&free[self.pinned..]);
        all
    }

    fn free_index(&self, player: usize) -> Option<usize> {
        use std::cmp::Ordering::*;
        match player.cmp(&self.pinned) {
            Less => Some(player),
            Equal => None,
            Greater => Some(player - 1),
        }
    }

    fn loss(&self, free: &[f64]) -> f64 {
        let r = self.all(free);
        let mut loss = 0.0;
        for i in 0..r.len() {
            for j in (i + 1)..r.len() {
                let n = self.tally.trials[i][j];
                if n == 0.0 {
                    continue;
                }
                // -[w_ij ln p_ij + w_ji ln p_ji], with ln p_ij = -ln(1 + e^(r_j - r_i)).
                let d = r[i] - r[j];
                loss +=
                    self.tally.points[i][j] * softplus(-d) + self.tally.points[j][i] * softplus(d);
            }
        }
        loss
    }

    fn gradient(&self, free: &[f64]) -> Vec<f64> {
        let r = self.all(free);
        let mut g = vec![0.0; free.len()];
        for i in 0..r.len() {
            let Some(fi) = self.free_index(i) else {
                continue;
            };
            for j in (0..r.len()).filter(|&j| j != i) {
                let n = self.tally.trials[i][j];
                if n > 0.0 {
                    g[fi] -= self.tally.points[i][j] - n * logistic(r[i] - r[j]);
                }
            }
        }
        g
    }

    /// The Hessian of the loss (the observed information), over the free players.
    fn information(&self, free: &[f64]) -> Vec<Vec<f64>> {
        let r = self.all(free);
        let mut h = vec![vec![0.0; free.len()]; free.len()];
        for i in 0..r.len() {
            for j in (i + 1)..r.len() {
                let n = self.tally.trials[i][j];
                if n == 0.0 {
                    continue;
                }
                let p = logistic(r[i] - r[j]);
                let w = n * p * (1.0 - p);
                let (fi, fj) = (self.free_index(i), self.free_index(j));
                if let Some(fi) = fi {
                    h[fi][fi] += w;
                }
                if let Some(fj) = fj {
                    h[fj][fj] += w;
                }
                if let (Some(fi), Some(fj)) = (fi, fj) {
                    h[fi][fj] -= w;
                    h[fj][fi] -= w;
                }
            }
        }
        h
    }
}

fn logistic(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

/// ln(1 + e^x) without overflow.
fn softplus(x: f64) -> f64 {
    if x > 30.0 {
        x
    } else {
        x.exp().ln_1p()
    }
}

/// The inverse of a symmetric positive definite matrix, by its Cholesky factor. The
/// information matrix is positive definite by construction: the prior ties every free player
/// to the pinned one.
// Row and column indices read as the algebra does; iterators would hide it.
#[allow(clippy::needless_range_loop)]
fn spd_inverse(a: &[Vec<f64>]) -> Option<Vec<Vec<f64>>> {
    let n = a.len();
    let mut l = vec![vec![0.0; n]; n];
    for i in 0..n {
        for j in 0..=i {
            let s: f64 = a[i][j] - (0..j).map(|k| l[i][k] * l[j][k]).sum::<f64>();
            if i == j {
                if s <= 0.0 {
                    return None;
                }
                l[i][i] = s.sqrt();
            } else {
                l[i][j] = s / l[j][j];
            }
        }
    }
    // Solve L L^T x = e_c for each column c.
    let mut inverse = vec![vec![0.0; n]; n];
    for c in 0..n {
        let mut y = vec![0.0; n];
        for i in 0..n {
            let e = if i == c { 1.0 } else { 0.0 };
            y[i] = (e - (0..i).map(|k| l[i][k] * y[k]).sum::<f64>()) / l[i][i];
        }
        let mut x = vec![0.0; n];
        for i in (0..n).rev() {
            x[i] = (y[i] - ((i + 1)..n).map(|k| l[k][i] * x[k]).sum::<f64>()) / l[i][i];
        }
        for (i, xi) in x.into_iter().enumerate() {
            inverse[i][c] = xi;
        }
    }
    Some(inverse)
}

/// Newton steps most: each at least halves the distance to the optimum once near it.
const NEWTON_STEPS: usize = 100;
/// Step halvings within one Newton step most.
const HALVINGS: usize = 60;
/// Converged once no rating moves more than this (natural units: 4e-9 Elo).
const CONVERGED: f64 = 1e-11;

/// The maximum of the posterior over the free players' ratings, from 0.
fn newton(posterior: &Posterior<'_>, free_players: usize) -> Vec<f64> {
    let mut free = vec![0.0; free_players];
    if free_players == 0 {
        return free;
    }
    let mut loss = posterior.loss(&free);
    for _ in 0..NEWTON_STEPS {
        let gradient = posterior.gradient(&free);
        let Some(inverse) = spd_inverse(&posterior.information(&free)) else {
            break;
        };
        let step: Vec<f64> = inverse
            .iter()
            .map(|row| row.iter().zip(&gradient).map(|(h, g)| h * g).sum())
            .collect();
        let mut scale = 1.0;
        let mut moved = false;
        for _ in 0..HALVINGS {
            let candidate: Vec<f64> = free.iter().zip(&step).map(|(x, s)| x - scale * s).collect();
            let candidate_loss = posterior.loss(&candidate);
            if candidate_loss <= loss {
                free = candidate;
                loss = candidate_loss;
                moved = true;
                break;
            }
            scale /= 2.0;
        }
        let largest = step.iter().fold(0.0f64, |m, s| m.max((scale * s).abs()));
        if !moved || largest < CONVERGED {
            break;
        }
    }
    free
}

/// Fits the ratings of `players` players from `trials`, player `pinned` at 0.
pub(crate) fn fit(players: usize, pinned: usize, trials: &[Trial]) -> Result<Ratings, RatingError> {
    if pinned >= players {
        return Err(RatingError::PinnedOutOfRange { pinned, players });
    }
    let tally = Tally::new(players, pinned, trials)?;
    let mut taken = vec![0u64; players];
    for t in trials {
        taken[t.a] += 1;
        taken[t.b] += 1;
    }
    let posterior = Posterior {
        tally: &tally,
        pinned,
    };
    let free = newton(&posterior, players - 1);
    let covariance = spd_inverse(&posterior.information(&free)).unwrap_or_else(|| {
        // Cannot happen with the prior; infinite intervals say "unknown" if it ever did.
        vec![vec![f64::INFINITY; free.len()]; free.len()]
    });
    let all = posterior.all(&free);
    let ratings = (0..players)
        .map(|i| {
            let margin = match posterior.free_index(i) {
                None => 0.0,
                Some(fi) => Z95 * covariance[fi][fi].sqrt() * ELO_PER_NAT,
            };
            Rating {
                elo: all[i] * ELO_PER_NAT,
                margin,
                trials: taken[i],
            }
        })
        .collect();
    Ok(Ratings {
        players: ratings,
        pinned,
        covariance,
    })
}

impl Ratings {
    /// The pair of players (among `playing`) whose next trial would shrink the sum of the
    /// free players' rating variances the most, with that reduction: adding a trial between
    /// i and j adds `w d d^T` to the information (`d = e_i - e_j`, `w = p (1 - p)`), which by
    /// Sherman-Morrison takes `w |C d|^2 / (1 + w d^T C d)` off the trace of the covariance
    /// `C`. Pairs of two close, uncertain players win; a pair whose result is foregone
    /// (`p` near 0 or 1) teaches little. Ties go to the first pair in order.
    pub(crate) fn most_informative_pair(&self, playing: &[usize]) -> Option<((usize, usize), f64)> {
        let free = |i: usize| match i.cmp(&self.pinned) {
            std::cmp::Ordering::Less => Some(i),
            std::cmp::Ordering::Equal => None,
            std::cmp::Ordering::Greater => Some(i - 1),
        };
        let n = self.covariance.len();
        let mut best: Option<((usize, usize), f64)> = None;
        for (x, &i) in playing.iter().enumerate() {
            for &j in &playing[x + 1..] {
                if i == j || i >= self.players.len() || j >= self.players.len() {
                    continue;
                }
                // C d, with d = e_i - e_j over the free players.
                let mut cd = vec![0.0; n];
                for (k, c) in cd.iter_mut().enumerate() {
                    *c = free(i).map_or(0.0, |fi| self.covariance[k][fi])
                        - free(j).map_or(0.0, |fj| self.covariance[k][fj]);
                }
                let dcd = free(i).map_or(0.0, |fi| cd[fi]) - free(j).map_or(0.0, |fj| cd[fj]);
                let diff = (self.players[i].elo - self.players[j].elo) / ELO_PER_NAT;
                let p = logistic(diff);
                let w = p * (1.0 - p);
                let gain = w * cd.iter().map(|c| c * c).sum::<f64>() / (1.0 + w * dcd);
                if gain.is_finite() && best.is_none_or(|(_, b)| gain > b) {
                    best = Some(((i, j), gain));
                }
            }
        }
        best
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trial(a: usize, b: usize, a_score: f64) -> Trial {
        Trial { a, b, a_score }
    }

    /// The fixed trials of tests/ladder/trials.tsv (player a, player b, a's score), and the
    /// ratings and margins tests/ladder/bt_reference.py fits from them (expected.tsv).
    fn reference() -> (usize, usize, Vec<Trial>, Vec<(f64, f64)>) {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/ladder");
        let read = |name: &str| {
            std::fs::read_to_string(format!("{dir}/{name}")).expect("the reference files")
        };
        let trials_text = read("trials.tsv");
        let mut lines = trials_text.lines().filter(|l| !l.starts_with('#'));
        let header: Vec<usize> = lines
            .next()
            .expect("a header: players pinned")
            .split_whitespace()
            .map(|x| x.parse().expect("a count"))
            .collect();
        let trials = lines
            .map(|l| {
                let f: Vec<&str> = l.split_whitespace().collect();
                trial(
                    f[0].parse().unwrap(),
                    f[1].parse().unwrap(),
                    f[2].parse().unwrap(),
                )
            })
            .collect();
        let expected = read("expected.tsv")
            .lines()
            .filter(|l| !l.starts_with('#'))
            .map(|l| {
                let f: Vec<f64> = l.split_whitespace().map(|x| x.parse().unwrap()).collect();
                (f[1], f[2])
            })
            .collect();
        (header[0], header[1], trials, expected)
    }

    #[test]
    fn the_fit_matches_an_independent_implementation() {
        let (players, pinned, trials, expected) = reference();
        let ratings = fit(players, pinned, &trials).unwrap();
        assert_eq!(ratings.players.len(), expected.len());
        for (i, (got, (elo, margin))) in ratings.players.iter().zip(&expected).enumerate() {
            assert!(
                (got.elo - elo).abs() < 0.1,
                "player {i}: {} against the reference's {elo}",
                got.elo
            );
            assert!(
                (got.margin - margin).abs() < 0.1,
                "player {i}: margin {} against the reference's {margin}",
                got.margin
            );
        }
    }

    #[test]
    fn even_results_give_equal_ratings_and_more_games_narrower_intervals() {
        let few: Vec<Trial> = (0..4).map(|k| trial(k % 2, 1 - k % 2, 0.5)).collect();
        let many: Vec<Trial> = (0..400).map(|k| trial(k % 2, 1 - k % 2, 0.5)).collect();
        let (few, many) = (fit(2, 0, &few).unwrap(), fit(2, 0, &many).unwrap());
        assert!(few.players[1].elo.abs() < 1e-6);
        assert!(many.players[1].elo.abs() < 1e-6);
        assert!(many.players[1].margin < few.players[1].margin / 5.0);
        assert_eq!(many.players[0].margin, 0.0);
        assert_eq!(many.players[1].trials, 400);
    }

    #[test]
    fn a_score_of_three_quarters_is_about_191_elo_and_a_clean_sweep_stays_finite() {
        let trials: Vec<Trial> = (0..1000).map(|_| trial(1, 0, 0.75)).collect();
        let r = fit(2, 0, &trials).unwrap();
        // 400 log10(3) = 190.85; the prior's one drawn trial pulls it in a little.
        assert!(
            (r.players[1].elo - 190.85).abs() < 1.0,
            "{}",
            r.players[1].elo
        );
        let sweep: Vec<Trial> = (0..50).map(|_| trial(1, 0, 1.0)).collect();
        let r = fit(2, 0, &sweep).unwrap();
        assert!(r.players[1].elo.is_finite() && r.players[1].elo > 400.0);
    }

    #[test]
    fn bad_trials_are_refused() {
        assert_eq!(
            fit(2, 2, &[]).unwrap_err(),
            RatingError::PinnedOutOfRange {
                pinned: 2,
                players: 2
            }
        );
        assert!(matches!(
            fit(2, 0, &[trial(0, 3, 0.5)]),
            Err(RatingError::PlayerOutOfRange { player: 3, .. })
        ));
        assert!(matches!(
            fit(2, 0, &[trial(1, 1, 0.5)]),
            Err(RatingError::SelfPlay { index: 0 })
        ));
        assert!(matches!(
            fit(2, 0, &[trial(0, 1, 1.5)]),
            Err(RatingError::BadScore { .. })
        ));
        let alone = fit(1, 0, &[]).unwrap();
        assert_eq!(alone.players[0].elo, 0.0);
    }

    /// Many small ladders of random results, sweeps and lopsided pairings among them: every
    /// fit ends, at a point where the posterior's gradient is zero.
    #[test]
    fn every_fit_ends_at_the_optimum() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = move |n: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % n
        };
        for _ in 0..300 {
            let players = 2 + next(10) as usize;
            let trials: Vec<Trial> = (0..next(80))
                .filter_map(|_| {
                    let (a, b) = (next(players as u64) as usize, next(players as u64) as usize);
                    (a != b).then(|| trial(a, b, next(5) as f64 / 4.0))
                })
                .collect();
            let pinned = next(players as u64) as usize;
            let r = fit(players, pinned, &trials).unwrap();
            let tally = Tally::new(players, pinned, &trials).unwrap();
            let posterior = Posterior {
                tally: &tally,
                pinned,
            };
            let free: Vec<f64> = (0..players)
                .filter(|&i| i != pinned)
                .map(|i| r.players[i].elo / ELO_PER_NAT)
                .collect();
            let largest = posterior
                .gradient(&free)
                .iter()
                .fold(0.0f64, |m, g| m.max(g.abs()));
            // 1e-6 points of gradient: the ratings are within about 1e-4 Elo of the optimum.
            assert!(
                largest < 1e-6,
                "gradient {largest} at the fit of {trials:?}"
            );
            assert!(r
                .players
                .iter()
                .all(|p| p.elo.is_finite() && p.margin.is_finite()));
        }
    }

    #[test]
    fn the_next_pair_is_the_least_known_one() {
        // 0 and 1 have met often, 2 has played once: any pair with 2 teaches more.
        let mut trials: Vec<Trial> = (0..200).map(|k| trial(k % 2, 1 - k % 2, 0.5)).collect();
        trials.push(trial(2, 0, 0.5));
        let r = fit(3, 0, &trials).unwrap();
        let ((i, j), gain) = r.most_informative_pair(&[0, 1, 2]).unwrap();
        assert!(i == 2 || j == 2, "chose {i}-{j}");
        assert!(gain > 0.0);
        assert!(r.most_informative_pair(&[1]).is_none());
    }
}
