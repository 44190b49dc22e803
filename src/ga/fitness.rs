//! Fitness: the games one generation plays, played in parallel on rayon, and the score each
//! individual earns from them (points over points available: win 1, draw 0.5, loss 0).
//!
//! The games of a generation form one flat job list, a pure function of the config and the
//! population size, and are collected in list order, so the result does not depend on the
//! number of threads. A game between individuals i and j counts for both. Each colour-swapped
//! pair of games shares a random opening drawn from (seed, generation, pair); each player's
//! tie-breaking RNG comes from (seed, generation, game, side).
//!
//! The games themselves are the tuning engine's ([`crate::tune::games`]): a generation's job
//! lists carry their [`GameSpec`], so that wherever they are played the points are the same.
//! Games of an individual against itself are credited without being played, since playing
//! both sides it always earns exactly one of the two points of such a game.

use std::sync::Arc;

use super::config::{ConfigError, FitnessMode, GaConfig, RacingConfig, Resolved};
use super::genome::Genome;
use crate::agents::Budget;
use crate::tune::games::{GameSetup, LocalPlay};
use crate::tune::GameSpec;
use crate::tune::{Job, JobList, Rival};

/// What one generation's games gave.
#[derive(Clone, Debug, PartialEq)]
pub struct Evaluation {
    /// Each individual's fitness in [0, 1].
    pub fitness: Vec<f64>,
    /// Games actually played (self-play credits excluded).
    pub games_played: u64,
    /// With racing, the games each individual played against the fixed opponents.
    pub raced_games: Option<Vec<u32>>,
}

/// Everything needed to score populations, fixed for a run: the games (the engine's
/// `GameSetup`) and how they are scheduled and scored.
#[derive(Clone, Debug)]
pub struct FitnessSetup {
    games: GameSetup,
    /// The games' spec, as every job list hands it out.
    spec: Arc<GameSpec>,
    mode: FitnessMode,
    games_per_pair: u32,
    self_play: bool,
    mixed_weight: f64,
    common_openings: bool,
    racing: Option<RacingConfig>,
}

impl FitnessSetup {
    /// Builds the setup of a validated config, checking that every opponent builds.
    pub(crate) fn new(config: &GaConfig, resolved: &Resolved) -> Result<FitnessSetup, ConfigError> {
        let f = &config.fitness;
        let spec = GameSpec {
            features: resolved.features.clone(),
            depth: config.depth,
            rules: config.rules,
            board: config.board,
            pie: config.pie,
            seed: config.seed,
            opponents: f.opponents.clone(),
            opening_plies: f.opening_plies,
        };
        let games = GameSetup::new(spec).map_err(|e| match e {
            ConfigError::Invalid { field, reason } if field.starts_with("opponents") => {
                ConfigError::Invalid {
                    field: format!("fitness.{field}"),
                    reason,
                }
            }
            other => other,
        })?;
        debug_assert_eq!(
            games.pairing(0).start,
            resolved.start,
            "the games start where the config says"
        );
        Ok(FitnessSetup {
            spec: Arc::new(games.spec().clone()),
            games,
            mode: f.mode,
            games_per_pair: f.games_per_pair,
            self_play: f.self_play,
            mixed_weight: f.mixed_weight,
            common_openings: f.common_openings,
            racing: f.racing.clone(),
        })
    }

    /// The games, as the engine plays them.
    pub fn games(&self) -> &GameSetup {
        &self.games
    }

    /// Games are skipped, and the searches of those under way stopped, once `cancel` is set;
    /// the evaluation of a cancelled generation means nothing and is to be dropped.
    pub(crate) fn set_cancel(&mut self, cancel: Budget) {
        self.games.set_cancel(cancel);
    }

    fn opponents(&self) -> usize {
        self.spec.opponents.len()
    }

    fn uses_round_robin(&self) -> bool {
        self.mode != FitnessMode::Opponents
    }

    fn uses_opponents(&self) -> bool {
        self.mode != FitnessMode::RoundRobin
    }

    /// The games a generation of `n` individuals plays whose schedule is fixed in advance (all
    /// of them but the raced opponent games), in the order their results are summed.
    pub(crate) fn jobs(&self, n: usize) -> Vec<Job> {
        let pairs = (self.games_per_pair / 2) as u64;
        let mut jobs = Vec::new();
        let mut pair = 0u64;
        let mut push_pairs = |jobs: &mut Vec<Job>, me: usize, rival: Rival| {
            for _ in 0..pairs {
                for me_first in [true, false] {
                    jobs.push(Job {
                        me,
                        rival,
                        pair,
                        me_first,
                    });
                }
                pair += 1;
            }
        };
        if self.uses_round_robin() {
            for i in 0..n {
                for j in i + 1..n {
                    push_pairs(&mut jobs, i, Rival::Member(j));
                }
            }
        }
        if self.uses_opponents() && self.racing.is_none() {
            if self.common_openings {
                // Pair numbers start past the round robin's so the streams never meet; every
                // individual plays the same pairs, so the same openings and tie-breaking RNGs.
                let first_pair = pair;
                for i in 0..n {
                    for o in 0..self.opponents() {
                        for k in 0..pairs {
                            let shared = o as u64 * pairs + k;
                            for me_first in [true, false] {
                                jobs.push(Job {
                                    me: i,
                                    rival: Rival::Opponent(o),
                                    pair: first_pair + shared,
                                    me_first,
                                });
                            }
                        }
                    }
                }
            } else {
                for i in 0..n {
                    for o in 0..self.opponents() {
                        push_pairs(&mut jobs, i, Rival::Opponent(o));
                    }
                }
            }
        }
        jobs
    }

    /// Plays every game of generation `generation` here and scores `population`.
    pub fn evaluate(&self, population: &[Genome], generation: u32) -> Evaluation {
        let mut scoring = self.score(Arc::new(population.to_vec()), generation);
        while let Some(list) = scoring.next_list(self) {
            let points = scoring.play_here(self, &list);
            scoring.tell(self, points);
        }
        scoring.finish(self)
    }

    /// Generation `generation`'s fitness of `population`, in ask/tell form.
    pub(crate) fn score(&self, population: Arc<Vec<Genome>>, generation: u32) -> Scoring {
        let n = population.len();
        Scoring {
            generation,
            population,
            local: None,
            stage: Stage::Fixed,
            out: None,
            rr_points: vec![0.0; n],
            rr_avail: vec![0.0; n],
            op_points: vec![0.0; n],
            op_avail: vec![0.0; n],
            games_played: 0,
            units: vec![Vec::new(); n],
            racing_now: (0..n).collect(),
        }
    }

    /// The opponent games of racing round `round` (see [`RacingConfig`]): each racing
    /// individual's next units, a unit being one colour-swapped pair against every opponent.
    /// Who plays what depends only on earlier rounds' scores, so the race is the same at any
    /// thread count and however its rounds are spread.
    fn racing_jobs(&self, racing: &RacingConfig, round: u64, scoring: &Scoring) -> Vec<Job> {
        let n = scoring.population.len();
        let opponents = self.opponents();
        let per_individual = (self.games_per_pair / 2) as u64;
        let total = n as u64 * per_individual;
        // Raced pairs are numbered past the round robin's, as common openings' are.
        let first_pair = if self.uses_round_robin() {
            (n * n.saturating_sub(1) / 2) as u64 * per_individual
        } else {
            0
        };
        let pair_of = |me: usize, unit: u64, opponent: usize| -> u64 {
            let slot = if self.common_openings {
                unit
            } else {
                me as u64 * total + unit
            };
            first_pair + slot * opponents as u64 + opponent as u64
        };
        let rounds = racing.rounds as u64;
        let budget = total * (round + 1) / rounds - total * round / rounds;
        let standing = standing(&scoring.racing_now, &scoring.units);
        let share = budget / standing.len() as u64;
        let extra = budget % standing.len() as u64;
        let mut jobs = Vec::new();
        for (rank, &me) in standing.iter().enumerate() {
            let played = scoring.units[me].len() as u64;
            let count = share + u64::from((rank as u64) < extra);
            for unit in played..played + count {
                for opponent in 0..opponents {
                    for me_first in [true, false] {
                        jobs.push(Job {
                            me,
                            rival: Rival::Opponent(opponent),
                            pair: pair_of(me, unit, opponent),
                            me_first,
                        });
                    }
                }
            }
        }
        jobs
    }
}

/// Where a generation's [`Scoring`] stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stage {
    /// The games fixed in advance ([`FitnessSetup::jobs`]) are next.
    Fixed,
    /// Racing round `k` is next.
    Racing(u32),
    Done,
}

/// A generation's fitness in ask/tell form: `Scoring::next_list` hands out its job lists
/// one at a time (a racing round depends on the rounds before it), `Scoring::tell` takes
/// each list's points in job order, and `Scoring::finish` scores the population. Where and
/// how the lists were played changes nothing in the scores.
pub struct Scoring {
    generation: u32,
    population: Arc<Vec<Genome>>,
    /// Evaluators and memos for lists played in this process, made at the first such list and
    /// shared by the generation's later lists (the memos save searches across racing rounds).
    local: Option<LocalPlay>,
    stage: Stage,
    /// The list handed out and not yet told.
    out: Option<JobList>,
    rr_points: Vec<f64>,
    rr_avail: Vec<f64>,
    op_points: Vec<f64>,
    op_avail: Vec<f64>,
    games_played: u64,
    /// With racing, each individual's unit scores in the order played.
    units: Vec<Vec<f64>>,
    racing_now: Vec<usize>,
}

impl std::fmt::Debug for Scoring {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scoring")
            .field("generation", &self.generation)
            .field("stage", &self.stage)
            .finish()
    }
}

impl Scoring {
    pub fn generation(&self) -> u32 {
        self.generation
    }

    /// The next job list to play, the same one again until it is told; `None` once every
    /// list has been told and [`Scoring::finish`] can score. Lists without jobs are not
    /// handed out.
    pub(crate) fn next_list(&mut self, setup: &FitnessSetup) -> Option<JobList> {
        loop {
            if let Some(out) = &self.out {
                return Some(out.clone());
            }
            let (part, jobs) = match self.stage {
                Stage::Done => return None,
                Stage::Fixed => (0, setup.jobs(self.population.len())),
                Stage::Racing(round) => {
                    let racing = setup.racing.as_ref()?;
                    (round + 1, setup.racing_jobs(racing, round as u64, self))
                }
            };
            let list = JobList {
                generation: self.generation,
                part,
                population: self.population.clone(),
                jobs,
                games: setup.spec.clone(),
            };
            if list.jobs.is_empty() {
                self.take(setup, &list, &[]);
            } else {
                self.out = Some(list);
            }
        }
    }

    /// The points of the list last handed out, in job order.
    ///
    /// # Panics
    /// When no list is out or `points` does not have one entry per job: the caller's bug,
    /// not something a user can cause (a batch's result is checked when it is collected).
    pub(crate) fn tell(&mut self, setup: &FitnessSetup, points: Vec<f64>) {
        let list = self.out.take().expect("tell answers a list handed out");
        assert_eq!(points.len(), list.jobs.len(), "one point per job");
        self.take(setup, &list, &points);
    }

    fn take(&mut self, setup: &FitnessSetup, list: &JobList, points: &[f64]) {
        match self.stage {
            Stage::Fixed => {
                for (job, &mine) in list.jobs.iter().zip(points) {
                    match job.rival {
                        Rival::Member(j) => {
                            self.rr_points[job.me] += mine;
                            self.rr_avail[job.me] += 1.0;
                            self.rr_points[j] += 1.0 - mine;
                            self.rr_avail[j] += 1.0;
                        }
                        Rival::Opponent(_) => {
                            self.op_points[job.me] += mine;
                            self.op_avail[job.me] += 1.0;
                        }
                    }
                }
                self.games_played += list.jobs.len() as u64;
                self.stage = match &setup.racing {
                    Some(racing) if racing.rounds > 0 => Stage::Racing(0),
                    _ => Stage::Done,
                };
            }
            Stage::Racing(round) => {
                let games_per_unit = 2 * setup.opponents();
                for (unit_jobs, unit_points) in list
                    .jobs
                    .chunks(games_per_unit)
                    .zip(points.chunks(games_per_unit))
                {
                    let score = unit_points.iter().sum::<f64>() / games_per_unit as f64;
                    self.units[unit_jobs[0].me].push(score);
                }
                let rounds = setup.racing.as_ref().map_or(0, |r| r.rounds);
                self.stage = if round + 1 < rounds {
                    if let Some(racing) = &setup.racing {
                        self.racing_now = survivors(racing, &self.racing_now, &self.units);
                    }
                    Stage::Racing(round + 1)
                } else {
                    Stage::Done
                };
            }
            Stage::Done => {}
        }
    }

    /// Plays `list` on the current rayon pool, as [`GameSetup::play_batch`] would, with
    /// the evaluators and memos this generation's earlier lists made here.
    pub(crate) fn play_here(&mut self, setup: &FitnessSetup, list: &JobList) -> Vec<f64> {
        let local = self
            .local
            .get_or_insert_with(|| setup.games.local(&self.population));
        setup.games.play_local(local, list)
    }

    /// Scores the population once every list has been told (lists not told count nothing).
    pub(crate) fn finish(mut self, setup: &FitnessSetup) -> Evaluation {
        let n = self.population.len();
        let mut raced_games = None;
        if setup.racing.is_some() {
            let games_per_unit = 2 * setup.opponents();
            for (i, scores) in self.units.iter().enumerate() {
                self.op_points[i] = scores.iter().sum::<f64>() * games_per_unit as f64;
                self.op_avail[i] = (scores.len() * games_per_unit) as f64;
            }
            let games: Vec<u32> = self
                .units
                .iter()
                .map(|u| (u.len() * games_per_unit) as u32)
                .collect();
            self.games_played += games.iter().map(|&g| g as u64).sum::<u64>();
            raced_games = Some(games);
        }
        if setup.self_play && setup.uses_round_robin() {
            let games = setup.games_per_pair as f64;
            for i in 0..n {
                self.rr_points[i] += games / 2.0;
                self.rr_avail[i] += games;
            }
        }
        let ratio = |p: f64, a: f64| if a > 0.0 { p / a } else { 0.0 };
        let fitness = (0..n)
            .map(|i| {
                let rr = ratio(self.rr_points[i], self.rr_avail[i]);
                let op = ratio(self.op_points[i], self.op_avail[i]);
                match setup.mode {
                    FitnessMode::RoundRobin => rr,
                    FitnessMode::Opponents => op,
                    FitnessMode::Mixed => (1.0 - setup.mixed_weight) * rr + setup.mixed_weight * op,
                }
            })
            .collect();
        Evaluation {
            fitness,
            games_played: self.games_played,
            raced_games,
        }
    }
}

/// Smallest standard deviation of unit scores a racing interval assumes, so that a few
/// identical units (a strong player sweeping every opponent) do not make a zero-width
/// interval: about the spread of one unit of 14 independent even games.
const MIN_UNIT_SD: f64 = 0.05;

/// Mean unit score, and the half-width of its interval in standard errors (infinite before
/// two units).
fn unit_stats(scores: &[f64]) -> (f64, f64) {
    let k = scores.len() as f64;
    if scores.len() < 2 {
        let mean = if scores.is_empty() { 0.0 } else { scores[0] };
        return (mean, f64::INFINITY);
    }
    let mean = scores.iter().sum::<f64>() / k;
    let variance = scores.iter().map(|s| (s - mean).powi(2)).sum::<f64>() / (k - 1.0);
    (mean, variance.sqrt().max(MIN_UNIT_SD) / k.sqrt())
}

/// `racing` individuals, best mean unit score first (the lower index among equals).
fn standing(racing: &[usize], units: &[Vec<f64>]) -> Vec<usize> {
    let mut ranked = racing.to_vec();
    let mean = |i: usize| unit_stats(&units[i]).0;
    ranked.sort_by(|&a, &b| mean(b).total_cmp(&mean(a)).then(a.cmp(&b)));
    ranked
}

/// Who keeps racing: the `leaders` best, and everyone whose upper bound reaches the lowest
/// lower bound among them. Kept in index order.
fn survivors(racing: &RacingConfig, racing_now: &[usize], units: &[Vec<f64>]) -> Vec<usize> {
    let ranked = standing(racing_now, units);
    let leaders = racing.leaders.min(ranked.len());
    let bound = |i: usize, sign: f64| {
        let (mean, se) = unit_stats(&units[i]);
        if se.is_infinite() {
            return sign * f64::INFINITY;
        }
        mean + sign * racing.z * se
    };
    let bar = ranked[..leaders]
        .iter()
        .map(|&i| bound(i, -1.0))
        .fold(f64::INFINITY, f64::min);
    let mut kept: Vec<usize> = ranked
        .iter()
        .enumerate()
        .filter(|&(rank, &i)| rank < leaders || bound(i, 1.0) >= bar)
        .map(|(_, &i)| i)
        .collect();
    kept.sort_unstable();
    kept
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agents::rng_from_seed;
    use crate::agents::spec::{FeatureChoice, WeightChoice};
    use crate::agents::{AgentSpec, Ties};
    use crate::game::{Position, Rules};
    use crate::matches::game::decided_south_points;
    use crate::matches::pairing::a_points;
    use crate::matches::pairing::PairSeeds;
    use crate::matches::{play_game, random_opening, Seats};
    use crate::search::Depth;

    fn setup(json: &str) -> (GaConfig, FitnessSetup) {
        let patch: serde_json::Value = serde_json::from_str(json).expect("valid JSON");
        let config = GaConfig::default()
            .with_overrides(&patch)
            .expect("valid config");
        let resolved = config.validate().expect("valid");
        let setup = FitnessSetup::new(&config, &resolved).expect("setup");
        (config, setup)
    }

    #[test]
    fn round_robin_jobs_cover_each_pair_once_with_both_colours() {
        let (_, s) = setup(r#"{"population": 4, "fitness": {"games_per_pair": 4}}"#);
        let jobs = s.jobs(4);
        assert_eq!(jobs.len(), 6 * 4);
        for pair in 0..12u64 {
            let games: Vec<_> = jobs.iter().filter(|j| j.pair == pair).collect();
            assert_eq!(games.len(), 2);
            assert_eq!((games[0].me, games[0].rival), (games[1].me, games[1].rival));
            assert!(games[0].me_first && !games[1].me_first);
        }
        let (_, s) = setup(
            r#"{"population": 3, "fitness": {"mode": "mixed", "opponents": ["random", "greedy"]}}"#,
        );
        assert_eq!(s.jobs(3).len(), 3 * 2 + 3 * 2 * 2);
    }

    #[test]
    fn common_openings_give_every_individual_the_same_games() {
        let (_, s) = setup(
            r#"{"population": 3, "fitness": {"mode": "mixed", "games_per_pair": 4,
                "opponents": ["random", "greedy"], "common_openings": true}}"#,
        );
        let jobs = s.jobs(3);
        let rr = 3 * 4;
        assert!(jobs[..rr]
            .iter()
            .all(|j| matches!(j.rival, Rival::Member(_))));
        let schedule = |me: usize| -> Vec<(Rival, u64, bool)> {
            jobs[rr..]
                .iter()
                .filter(|j| j.me == me)
                .map(|j| (j.rival, j.pair, j.me_first))
                .collect()
        };
        assert_eq!(schedule(0).len(), 2 * 4);
        assert_eq!(schedule(0), schedule(1));
        assert_eq!(schedule(0), schedule(2));
        // No opponent game reuses a round-robin opening or tie-breaking stream.
        let rr_max = jobs[..rr].iter().map(|j| j.pair).max().unwrap();
        assert!(jobs[rr..].iter().all(|j| j.pair > rr_max));
    }

    #[test]
    fn points_add_up() {
        // Round robin without self-play: the points of a generation are exactly its games.
        let (_, s) = setup(r#"{"population": 5, "depth": 1, "features": "abrams3"}"#);
        let pop: Vec<Genome> = (0..5).map(|i| vec![0.2 * i as f64, 0.5, 0.1]).collect();
        let e = s.evaluate(&pop, 0);
        assert_eq!(e.games_played, 20);
        let total: f64 = e.fitness.iter().map(|f| f * 8.0).sum();
        assert!((total - 20.0).abs() < 1e-9, "{e:?}");
        // Self-play adds half its games' points to everyone.
        let (_, s) = setup(
            r#"{"population": 5, "depth": 1, "features": "abrams3", "fitness": {"self_play": true}}"#,
        );
        let with_self = s.evaluate(&pop, 0);
        for (a, b) in e.fitness.iter().zip(&with_self.fitness) {
            assert!((b - (a * 8.0 + 1.0) / 10.0).abs() < 1e-12);
        }
    }

    #[test]
    fn ga_games_match_agents_built_from_specs() {
        let (config, s) = setup(r#"{"population": 2, "depth": 3, "features": "hunter10"}"#);
        let weights = [
            vec![
                0.225, 0.122, 0.654, 1.0, 0.484, 0.694, 0.918, 0.667, 0.194, 0.297,
            ],
            vec![0.9, 0.1, 0.1, 0.3, 0.0, 0.8, 0.2, 0.5, 0.5, 0.05],
        ];
        let local = s.games().local(&weights);
        let spec = |w: &Vec<f64>| AgentSpec::Heuristic {
            features: FeatureChoice::List(s.games().spec().features.clone()),
            weights: WeightChoice::Values(w.clone()),
            depth: Depth::Fixed(config.depth),
            time_ms: None,
            nodes: None,
            ties: Ties::Random,
            egdb: false,
        };
        // `local`'s memos are shared by all the games below, so many moves come from them.
        let mut decided_early = 0;
        for job in s.jobs(2).iter().cycle().take(8) {
            for generation in 0..3u64 {
                let ga = s.games().play_one(&local, job, generation);
                let mut a = spec(&weights[0]).build(config.rules).unwrap();
                let mut b = spec(&weights[1]).build(config.rules).unwrap();
                let pairing = s.games().pairing(generation);
                let (mut ra, mut rb) = pairing.seeds.players(job.pair, job.me_first);
                let start = pairing.opening(job.pair).0;
                let seats = Seats::ordered(&mut *a, &mut *b, &mut ra, &mut rb, job.me_first);
                let record = play_game(seats, start, config.rules);
                assert_eq!(ga, a_points(record.south_points(), job.me_first));
                let total = start.total_seeds();
                if record.south_store.max(record.north_store) * 2 > total {
                    decided_early += 1;
                }
            }
        }
        assert!(decided_early > 0);
    }

    #[test]
    fn games_against_fixed_opponents_match_agents_built_from_specs() {
        let (config, s) = setup(
            r#"{"population": 2, "depth": 2, "features": "hunter10",
                "fitness": {"mode": "opponents", "games_per_pair": 4, "common_openings": true,
                "opening_plies": 3, "opponents": ["minimax:3", "greedy",
                {"kind": "heuristic", "weights": "published", "depth": 2, "ties": "first"}]}}"#,
        );
        assert!(
            s.games().opponent_searches[0].is_some() && s.games().opponent_searches[1].is_none()
        );
        let weights = [
            vec![0.2, 0.1, 0.6, 1.0, 0.4, 0.7, 0.9, 0.6, 0.1, 0.3],
            vec![0.9, 0.1, 0.1, 0.3, 0.0, 0.8, 0.2, 0.5, 0.5, 0.05],
        ];
        let local = s.games().local(&weights);
        for generation in 0..2u64 {
            for job in s.jobs(2) {
                let ga = s.games().play_one(&local, &job, generation);
                let mut me = AgentSpec::Heuristic {
                    features: FeatureChoice::List(s.games().spec().features.clone()),
                    weights: WeightChoice::Values(weights[job.me].clone()),
                    depth: Depth::Fixed(config.depth),
                    time_ms: None,
                    nodes: None,
                    ties: Ties::Random,
                    egdb: false,
                }
                .build(config.rules)
                .unwrap();
                let Rival::Opponent(o) = job.rival else {
                    panic!("only opponents")
                };
                let mut rival = s.games().spec().opponents[o].build(config.rules).unwrap();
                let pairing = s.games().pairing(generation);
                let (mut rm, mut rr) = pairing.seeds.players(job.pair, job.me_first);
                let start = pairing.opening(job.pair).0;
                let seats = Seats::ordered(&mut *me, &mut *rival, &mut rm, &mut rr, job.me_first);
                let record = play_game(seats, start, config.rules);
                assert_eq!(ga, a_points(record.south_points(), job.me_first), "{job:?}");
            }
        }
    }

    const RACE: &str = r#"{"population": 6, "depth": 2, "features": "abrams3",
        "fitness": {"mode": "opponents", "games_per_pair": 16, "opening_plies": 4,
        "opponents": ["minimax:2", "heuristic:abrams3:published:2"],
        "racing": {"rounds": 4, "leaders": 2}}}"#;

    /// Three sound players, and three that throw their seeds away (negative store weight).
    fn race_population() -> Vec<Genome> {
        vec![
            vec![0.6, 0.4, 0.3],
            vec![-1.0, 0.2, 0.1],
            vec![0.5, 0.5, 0.2],
            vec![-0.8, -0.5, 0.0],
            vec![0.7, 0.3, 0.4],
            vec![-0.9, 0.9, 0.9],
        ]
    }

    #[test]
    fn racing_plays_the_same_number_of_games_and_gives_them_to_the_contenders() {
        let (_, raced) = setup(RACE);
        let (_, fixed) = setup(&RACE.replace(
            r#""racing": {"rounds": 4, "leaders": 2}"#,
            r#""common_openings": false"#,
        ));
        let pop = race_population();
        let race = raced.evaluate(&pop, 3);
        let plain = fixed.evaluate(&pop, 3);
        assert_eq!(race.games_played, plain.games_played);
        assert_eq!(plain.raced_games, None);
        let games = race.raced_games.clone().expect("racing reports games");
        assert_eq!(
            games.iter().map(|&g| g as u64).sum::<u64>(),
            race.games_played
        );
        // Nominally 8 pairs x 2 opponents x 2 colours = 32 games each; the first round
        // gives everyone a quarter of that.
        assert!(games.iter().all(|&g| g >= 8 && g % 4 == 0), "{games:?}");
        for weak in [1, 3, 5] {
            for sound in [0, 2, 4] {
                assert!(games[weak] < games[sound], "{games:?}");
                assert!(
                    race.fitness[weak] < race.fitness[sound],
                    "{:?}",
                    race.fitness
                );
            }
        }
    }

    #[test]
    fn racing_does_not_depend_on_the_thread_count() {
        let pop = race_population();
        for json in [
            RACE.to_string(),
            RACE.replace(
                r#""opening_plies": 4"#,
                r#""opening_plies": 4, "common_openings": true"#,
            ),
            RACE.replace(r#""mode": "opponents""#, r#""mode": "mixed""#),
        ] {
            let (_, s) = setup(&json);
            let on = |threads: usize| {
                rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .unwrap()
                    .install(|| s.evaluate(&pop, 1))
            };
            assert_eq!(on(1), on(2), "{json}");
        }
    }

    #[test]
    fn raced_games_use_pairs_no_other_game_uses() {
        let (_, s) = setup(&RACE.replace(r#""mode": "opponents""#, r#""mode": "mixed""#));
        // The fixed part is the round robin only; its pairs are all below the raced ones.
        let jobs = s.jobs(6);
        assert!(jobs.iter().all(|j| matches!(j.rival, Rival::Member(_))));
        assert_eq!(jobs.len(), 15 * 16);
    }

    #[test]
    fn survivors_keep_the_leaders_and_whoever_can_reach_them() {
        let racing = RacingConfig {
            rounds: 4,
            leaders: 1,
            z: 1.96,
        };
        let units = vec![
            vec![0.8, 0.7, 0.9, 0.8],
            vec![0.2, 0.3, 0.1, 0.2],
            vec![0.7, 0.9, 0.6, 0.8],
            vec![0.4],
        ];
        // 1 cannot reach 0's interval; 2 can; 3 has one unit, so no interval yet.
        assert_eq!(survivors(&racing, &[0, 1, 2, 3], &units), vec![0, 2, 3]);
        let wide = RacingConfig { z: 10.0, ..racing };
        assert_eq!(survivors(&wide, &[0, 1, 2, 3], &units), vec![0, 1, 2, 3]);
    }

    #[test]
    fn a_decided_game_stops_early_with_the_full_result() {
        let rules = Rules::Standard;
        let spec = AgentSpec::parse("minimax:2").unwrap();
        for seed in 0..20 {
            let mut rng = rng_from_seed(seed);
            let start = random_opening(Position::start(6, 4).unwrap(), 4, rules, &mut rng).0;
            let mut a = spec.build(rules).unwrap();
            let mut b = AgentSpec::Random.build(rules).unwrap();
            let (mut r1, mut r2) = (rng_from_seed(seed + 100), rng_from_seed(seed + 200));
            let full = play_game(Seats::new(&mut *a, &mut *b, &mut r1, &mut r2), start, rules);
            let (mut r1, mut r2) = (rng_from_seed(seed + 100), rng_from_seed(seed + 200));
            let seats = Seats::new(&mut *a, &mut *b, &mut r1, &mut r2);
            let quick = decided_south_points(seats, start, rules);
            assert_eq!(quick, full.south_points());
        }
    }
}
