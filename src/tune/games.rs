//! The games a population plays, as a tuner asks for them and anyone can play them: a
//! [`GameSpec`] says what is played (the weights' features and depth, the fixed opponents,
//! the board, rules and pie rule, the openings and the seed every game's random numbers come
//! from), and a [`GameSetup`] plays a [`JobList`]'s jobs on rayon. A job list carries its
//! spec, so that a worker process on another machine plays exactly the games the tuner would
//! have played here, with nothing of the tuner's own config.
//!
//! Individuals play exactly as the agent spec
//! `{"kind":"heuristic","features":[..],"weights":[..],"depth":D,"ties":"random"}` would
//! (the same search and tie-breaking), with their evaluator built once per list. Two shortcuts
//! leave every result unchanged: a game stops as soon as one store holds more than half the
//! seeds, and an individual's search from a position it has already searched among the same
//! list's games is not repeated (the search is exact, so only the tie-break, still drawn from
//! the game's RNG, is left to do).

use std::collections::HashMap;
use std::sync::Mutex;

use rayon::prelude::*;

use super::error::ConfigError;
use super::jobs::{BadBatch, GameSpec, Genome, Job, JobList, Rival};
use crate::agents::{Agent, AgentSpec, Budget, Decision, GameRng, MoveValue, Ties};
use crate::eval::{Evaluator, Feature, WeightedEval};
use crate::game::{Position, Rules, Side};
use crate::matches::game_rng;
use crate::matches::pairing::{PairSeeds, Pairing};
use crate::search::{AlphaBeta, Depth, KeptTable};

/// RNG stream of the openings.
const OPENING_STREAM: u64 = 0x6f70_656e;
/// RNG stream of the players' tie-breaking.
const GAME_STREAM: u64 = 0x6761_6d65;

/// Whether `spec` plays a fitness game as a fixed-depth search that remembers its root results
/// for the generation (a `minimax` or `heuristic` agent at a fixed depth, with no time or node
/// budget and no database): what the cost model counts such an opponent's side by.
pub(crate) fn remembers_roots(spec: &AgentSpec) -> bool {
    matches!(
        spec,
        AgentSpec::Minimax {
            depth: Depth::Fixed(_),
            time_ms: None,
            nodes: None,
            egdb: false,
            ..
        } | AgentSpec::Heuristic {
            depth: Depth::Fixed(_),
            time_ms: None,
            nodes: None,
            egdb: false,
            ..
        }
    )
}

/// The evaluator, depth and ties of a fixed-depth search agent without an endgame database
/// (an adaptive one, or one that reads a database, is played as built). `minimax` searches the store
/// difference, which is the one-feature weighted evaluation `store_diff` with weight 1 (the
/// same integer at every leaf).
fn fixed_search(spec: &AgentSpec, rules: Rules) -> Option<(WeightedEval, u32, Ties)> {
    if !remembers_roots(spec) {
        return None;
    }
    match spec {
        AgentSpec::Minimax {
            depth: Depth::Fixed(depth),
            time_ms: None,
            nodes: None,
            ties,
            egdb: false,
        } => WeightedEval::new(&[Feature::StoreDiff], &[1.0], rules)
            .ok()
            .map(|eval| (eval, *depth, *ties)),
        AgentSpec::Heuristic {
            depth: Depth::Fixed(depth),
            time_ms: None,
            nodes: None,
            ties,
            egdb: false,
            ..
        } => {
            let (features, weights) = spec.heuristic_terms().ok()?;
            WeightedEval::new(&features, &weights, rules)
                .ok()
                .map(|eval| (eval, *depth, *ties))
        }
        _ => None,
    }
}

/// An evaluator borrowed for one game, so that every game of a generation shares the
/// individual's one [`WeightedEval`].
struct Shared<'a>(&'a WeightedEval);

impl Evaluator for Shared<'_> {
    #[inline]
    fn evaluate(&self, pos: &Position, me: Side) -> i64 {
        self.0.evaluate(pos, me)
    }
}

/// One individual's root search results in one generation: for each position it searched
/// ([`Position::key16`]), its best moves as a bit set (bit `k - 1` for move `k`).
#[derive(Default)]
struct Memo(Mutex<HashMap<u128, u16>>);

impl Memo {
    fn get(&self, key: u128) -> Option<u16> {
        // A panic elsewhere cannot leave a half-written entry: inserts are single calls.
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .get(&key)
            .copied()
    }

    fn insert(&self, key: u128, best: u16) {
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .insert(key, best);
    }
}

/// A fixed-depth search player for one game: an individual, exactly as the `heuristic` agent
/// plays it (same search, same tie-breaking), or a fixed `minimax`/`heuristic` opponent, with
/// its root results shared through its [`Memo`].
struct Searcher<'a> {
    eval: Shared<'a>,
    memo: &'a Memo,
    rules: Rules,
    depth: u32,
    ties: Ties,
    table: KeptTable,
    /// The generation's cancel, read at every node of the search.
    cancel: &'a Budget,
}

impl Agent for Searcher<'_> {
    fn choose(&mut self, pos: &Position, rng: &mut GameRng) -> Decision {
        let key = pos.fits_key16().then(|| pos.key16());
        let cached = key.and_then(|k| self.memo.get(k));
        let (best, nodes, value) = match cached {
            Some(best) => (best, 0, None),
            None => {
                let mut search = AlphaBeta::new(&self.eval, self.rules);
                search.set_budget(self.cancel);
                let result = search.search_depth_keeping(pos, self.depth, &mut self.table);
                let best = result
                    .best_moves
                    .iter()
                    .fold(0u16, |set, &mv| set | 1 << (mv - 1));
                // A cancelled search's moves are no minimax result: never remembered.
                if let Some(k) = key.filter(|_| !self.cancel.is_stopped()) {
                    self.memo.insert(k, best);
                }
                (
                    best,
                    result.nodes,
                    Some(MoveValue::SearchScore(result.value)),
                )
            }
        };
        // Bit `mv - 1` for every best move, the pie rule's swap (bit 15) included.
        let mut moves = [0usize; 16];
        let mut n = 0;
        for mv in 1..=16 {
            if best & 1 << (mv - 1) != 0 {
                moves[n] = mv;
                n += 1;
            }
        }
        Decision {
            mv: self.ties.pick(&moves[..n], rng),
            nodes,
            playouts: 0,
            value,
        }
    }
}

/// The evaluators and memos of one population, made once and shared by the job lists a
/// generation plays here (the memos save searches across a generation's lists).
pub(crate) struct LocalPlay {
    evals: Vec<WeightedEval>,
    memos: Vec<Memo>,
}

/// A [`GameSpec`] ready to play: its start position and its opponents checked, and its
/// fixed-depth opponents' evaluators built.
#[derive(Clone, Debug)]
pub struct GameSetup {
    spec: GameSpec,
    start: Position,
    /// Per opponent, its evaluator, depth and tie rule when it is a pure fixed-depth search
    /// (`minimax` or `heuristic` without a time budget), whose moves can be memoized.
    pub(crate) opponent_searches: Vec<Option<(WeightedEval, u32, Ties)>>,
    cancel: Budget,
}

impl GameSetup {
    /// The setup of `spec`, checking its board and that every opponent builds (an error
    /// names `opponents[i]`).
    pub(crate) fn new(spec: GameSpec) -> Result<GameSetup, ConfigError> {
        let start = Position::start(spec.board.pits, spec.board.seeds)
            .map_err(|e| ConfigError::invalid("board", e.to_string()))?
            .with_pie(spec.pie);
        for (i, agent) in spec.opponents.iter().enumerate() {
            agent
                .build(spec.rules)
                .map_err(|e| ConfigError::invalid(format!("opponents[{i}]"), e.to_string()))?;
        }
        let opponent_searches = spec
            .opponents
            .iter()
            .map(|agent| fixed_search(agent, spec.rules))
            .collect();
        Ok(GameSetup {
            spec,
            start,
            opponent_searches,
            cancel: Budget::unlimited(),
        })
    }

    pub(crate) fn spec(&self) -> &GameSpec {
        &self.spec
    }

    /// The evaluators and memos of `population`, for [`GameSetup::play_local`].
    pub(crate) fn local(&self, population: &[Genome]) -> LocalPlay {
        LocalPlay {
            evals: population.iter().map(|g| self.evaluator(g)).collect(),
            memos: self.memos(population.len()),
        }
    }

    /// Plays `list` on the current rayon pool with `local`'s evaluators and memos (made for
    /// `list`'s population): exactly what [`GameSetup::play_batch`] gives for its jobs.
    #[cfg(test)]
    pub(crate) fn play_one(&self, local: &LocalPlay, job: &Job, generation: u64) -> f64 {
        self.play_job(job, generation, &local.evals, &local.memos)
    }

    pub(crate) fn play_local(&self, local: &LocalPlay, list: &JobList) -> Vec<f64> {
        self.play_here(
            &list.jobs,
            list.generation as u64,
            &local.evals,
            &local.memos,
        )
    }

    /// Plays `jobs` of generation `generation` for `population` on the current rayon pool and
    /// returns each job's points, in job order: what a worker process does with a batch, and
    /// exactly what the same jobs give inside a generation. Stops early (the
    /// answer then means nothing) once the setup's cancel budget is stopped.
    pub(crate) fn play_batch(
        &self,
        population: &[Genome],
        generation: u32,
        jobs: &[Job],
    ) -> Result<Vec<f64>, BadBatch> {
        let n = population.len();
        for (index, job) in jobs.iter().enumerate() {
            let bad = |reason: String| Err(BadBatch { index, reason });
            if job.me >= n {
                return bad(format!("individual {} of {n}", job.me));
            }
            match job.rival {
                Rival::Member(j) if j >= n => return bad(format!("individual {j} of {n}")),
                Rival::Opponent(o) if o >= self.spec.opponents.len() => {
                    return bad(format!("opponent {o} of {}", self.spec.opponents.len()))
                }
                _ => {}
            }
            if population[job.me].len() != self.spec.features.len() {
                return bad(format!(
                    "individual {} has {} weights for {} features",
                    job.me,
                    population[job.me].len(),
                    self.spec.features.len()
                ));
            }
        }
        let evals: Vec<WeightedEval> = population.iter().map(|g| self.evaluator(g)).collect();
        let memos = self.memos(n);
        Ok(self.play_here(jobs, generation as u64, &evals, &memos))
    }

    /// One memo per individual, then one per fixed opponent: an opponent's moves do not depend
    /// on whom it plays.
    fn memos(&self, n: usize) -> Vec<Memo> {
        (0..n + self.spec.opponents.len())
            .map(|_| Memo::default())
            .collect()
    }

    fn play_here(
        &self,
        jobs: &[Job],
        generation: u64,
        evals: &[WeightedEval],
        memos: &[Memo],
    ) -> Vec<f64> {
        jobs.par_iter()
            .map(|job| self.play_unless_cancelled(job, generation, evals, memos))
            .collect()
    }

    /// Games of a generation are skipped, and the searches of those under way
    /// stopped, once `cancel` is set; the evaluation of a cancelled generation means nothing
    /// and is to be dropped.
    pub(crate) fn set_cancel(&mut self, cancel: Budget) {
        self.cancel = cancel;
    }

    /// The heuristic evaluator of one genome.
    pub(crate) fn evaluator(&self, genome: &[f64]) -> WeightedEval {
        // Genomes come from the GA within validated bounds, or from a resumed record whose
        // weights were checked against the bounds; both are inside MAX_WEIGHT.
        WeightedEval::new(&self.spec.features, genome, self.spec.rules)
            .expect("genome weights are within the validated bounds")
    }

    fn individual<'a>(&'a self, eval: &'a WeightedEval, memo: &'a Memo) -> Searcher<'a> {
        Searcher {
            eval: Shared(eval),
            memo,
            rules: self.spec.rules,
            depth: self.spec.depth,
            ties: Ties::Random,
            table: KeptTable::default(),
            cancel: &self.cancel,
        }
    }

    /// The openings and tie-breaking RNGs of generation `generation`'s games.
    pub(crate) fn pairing(&self, generation: u64) -> Pairing<GameSeeds> {
        Pairing {
            start: self.start,
            rules: self.spec.rules,
            opening_plies: self.spec.opening_plies,
            seeds: GameSeeds {
                seed: self.spec.seed,
                generation,
            },
        }
    }

    /// Plays `job` and returns the points of its individual.
    /// [`GameSetup::play_job`], or nothing (0 points) once the generation is cancelled.
    fn play_unless_cancelled(
        &self,
        job: &Job,
        generation: u64,
        evals: &[WeightedEval],
        memos: &[Memo],
    ) -> f64 {
        if self.cancel.is_stopped() {
            return 0.0;
        }
        self.play_job(job, generation, evals, memos)
    }

    fn play_job(&self, job: &Job, generation: u64, evals: &[WeightedEval], memos: &[Memo]) -> f64 {
        let mut me = self.individual(&evals[job.me], &memos[job.me]);
        let mut member;
        let mut searcher;
        let mut built;
        let rival: &mut dyn Agent = match job.rival {
            Rival::Member(j) => {
                member = self.individual(&evals[j], &memos[j]);
                &mut member
            }
            Rival::Opponent(o) => match &self.opponent_searches[o] {
                Some((eval, depth, ties)) => {
                    searcher = Searcher {
                        eval: Shared(eval),
                        memo: &memos[evals.len() + o],
                        rules: self.spec.rules,
                        depth: *depth,
                        ties: *ties,
                        table: KeptTable::default(),
                        cancel: &self.cancel,
                    };
                    &mut searcher
                }
                None => {
                    // Opponents were built once in `new`, so building again cannot fail.
                    built = self.spec.opponents[o]
                        .build_within(self.spec.rules, &self.cancel)
                        .expect("opponent specs are checked when the setup is made");
                    &mut *built
                }
            },
        };
        self.pairing(generation)
            .points(&mut me, rival, job.pair, job.me_first)
    }
}

/// A population's games' random numbers: a pair's opening from (seed, generation, pair); each player's
/// tie-breaking RNG from (seed, generation, game, side), the game numbered 2 × pair, plus 1
/// when the individual moves second.
#[derive(Clone, Copy, Debug)]
pub(crate) struct GameSeeds {
    seed: u64,
    generation: u64,
}

impl PairSeeds for GameSeeds {
    fn opening(&self, pair: u64) -> GameRng {
        game_rng(self.seed, &[OPENING_STREAM, self.generation, pair])
    }

    fn players(&self, pair: u64, a_first: bool) -> (GameRng, GameRng) {
        let game = 2 * pair + !a_first as u64;
        let south = game_rng(self.seed, &[GAME_STREAM, self.generation, game, 0]);
        let north = game_rng(self.seed, &[GAME_STREAM, self.generation, game, 1]);
        if a_first {
            (south, north)
        } else {
            (north, south)
        }
    }
}
