//! The shared frame of the population tuners (the GA, CMA-ES, SPSA, differential evolution):
//! [`PopulationRun`] plays one generation of weight vectors per step under a [`GaConfig`]'s
//! fitness games, measures its leaders on the benchmark panel, keeps the hall of fame and the
//! champion, writes its [`GenerationRecord`] and asks its [`Breeder`] for the next generation,
//! from that record alone, so a run can be stopped after any generation and resumed from its
//! records with exactly the generations an uninterrupted run would produce.
//!
//! What makes each generation is the breeder's, and only the breeder's: the GA's operators
//! ([`super::engine`]), or another tuner's update (`crate::tuners`). The frame knows none of
//! them.

use std::time::Instant;

use super::benchmark::Benchmark;
use super::config::{Bounds, GaConfig};
use super::fitness::{FitnessSetup, Scoring};
use super::genome::{self, best_index, ranking};
use crate::eval::Feature;
use crate::search::Budget;
use crate::tune::panel::{self, BenchmarkRecord, Champion};
use crate::tune::tuner::{Ask, StepControl, Tuner};
use crate::tune::{
    ConfigError, FitnessStats, GenerationRecord, Genome, HallOfFame, Individual, JobList,
    StopReason, Timing,
};

/// What makes each generation of a population tuner: told every evaluated generation's
/// record, it answers with the next generation. It resumes from the run's records: its state
/// in the last ([`GenerationRecord::breeder`]), or what all of them hold.
pub trait Breeder: Send + std::fmt::Debug {
    /// Generation 0, within `bounds`.
    fn first(&mut self, bounds: &Bounds) -> Vec<Genome>;

    /// Learns from `record`, the generation this breeder made last, now evaluated, and
    /// returns the next one (as many individuals, within `bounds`).
    fn breed(&mut self, record: &GenerationRecord, bounds: &Bounds) -> Vec<Genome>;

    /// What this breeder knows before it is told of the generation it made last, if it
    /// needs more than the records' genomes and fitness: kept in that generation's record.
    fn checkpoint(&self) -> Option<serde_json::Value>;

    /// Takes back the state it had after making the last of `records` (the run's records so
    /// far, oldest first, as many as it needs), before being told of it.
    fn restore(&mut self, records: &[GenerationRecord]) -> Result<(), ConfigError>;
}

/// A population tuner's run, advanced one generation at a time.
#[derive(Debug)]
pub(crate) struct PopulationRun {
    config: GaConfig,
    features: Vec<Feature>,
    fitness: FitnessSetup,
    /// Makes each next generation.
    breeder: Box<dyn Breeder>,
    /// The generation `population` is, not yet evaluated unless `stopped` is set.
    generation: u32,
    population: Vec<Genome>,
    hall_of_fame: Option<HallOfFame>,
    benchmark: Option<Benchmark>,
    champion: Option<Champion>,
    stopped: Option<StopReason>,
    /// The generation under way: its fitness games so far, and when it started.
    scoring: Option<(Scoring, Instant)>,
}

impl PopulationRun {
    /// A run of `config` whose generations `breeder` makes: from its first generation, or
    /// carrying on after the last of `records` (the run's records so far, oldest first, as
    /// many as the breeder needs): the next generation is bred from that record exactly as the
    /// uninterrupted run bred it, so every later record is identical (wall times aside). The
    /// stop conditions are checked against `config`, so a finished run given more
    /// `generations` goes on.
    pub(crate) fn open(
        config: GaConfig,
        breeder: Box<dyn Breeder>,
        records: &[GenerationRecord],
    ) -> Result<PopulationRun, ConfigError> {
        let mut run = PopulationRun::prepare(config, breeder)?;
        match records.last() {
            None => run.population = run.breeder.first(&run.config.bounds),
            Some(last) => {
                run.check_record(last)?;
                run.breeder.restore(records)?;
                run.hall_of_fame = Some(last.hall_of_fame.clone());
                run.champion = last.champion.clone();
                run.generation = last.generation;
                run.population = last.individuals.iter().map(|i| i.weights.clone()).collect();
                match run.stop_after(last.generation, last.fitness.best) {
                    Some(reason) => run.stopped = Some(reason),
                    None => {
                        run.population = run.breeder.breed(last, &run.config.bounds);
                        run.generation = last.generation + 1;
                    }
                }
            }
        }
        Ok(run)
    }

    /// A run without a population yet.
    fn prepare(config: GaConfig, breeder: Box<dyn Breeder>) -> Result<PopulationRun, ConfigError> {
        let resolved = config.validate()?;
        let fitness = FitnessSetup::new(&config, &resolved)?;
        let benchmark = match config.benchmark.is_on() {
            true => Some(Benchmark::new(
                &config.benchmark,
                &resolved.features,
                config.depth,
                config.rules,
                resolved.start,
                config.seed,
            )?),
            false => None,
        };
        Ok(PopulationRun {
            features: resolved.features,
            fitness,
            breeder,
            config,
            generation: 0,
            population: Vec::new(),
            hall_of_fame: None,
            benchmark,
            champion: None,
            stopped: None,
            scoring: None,
        })
    }

    fn check_record(&self, r: &GenerationRecord) -> Result<(), ConfigError> {
        let bad = |why: String| Err(ConfigError::Resume(why));
        if r.individuals.len() != self.config.population {
            return bad(format!(
                "the record has {} individuals but population is {}",
                r.individuals.len(),
                self.config.population
            ));
        }
        let bounds = self.config.bounds;
        let genomes = r
            .individuals
            .iter()
            .map(|i| (&i.weights, i.fitness))
            .chain(std::iter::once((
                &r.hall_of_fame.weights,
                r.hall_of_fame.fitness,
            )));
        for (weights, fitness) in genomes {
            if weights.len() != self.features.len() {
                return bad(format!(
                    "a genome of {} weights in the record, but the config has {} features",
                    weights.len(),
                    self.features.len()
                ));
            }
            if let Some(w) = weights.iter().find(|w| !bounds.contains(**w)) {
                return bad(format!(
                    "weight {w} in the record is outside the bounds [{}, {}]",
                    bounds.min, bounds.max
                ));
            }
            if !(0.0..=1.0).contains(&fitness) {
                return bad(format!("fitness {fitness} in the record is not in [0, 1]"));
            }
        }
        if r.hall_of_fame.generation > r.generation
            || r.best_index >= r.individuals.len()
            || r.fitness.best != r.individuals[r.best_index].fitness
        {
            return bad("the record is inconsistent (hall of fame or best individual)".into());
        }
        Ok(())
    }

    /// Makes the games of the generation under way stop early once `cancel` is set (within one game
    /// per thread). A step that was cancelled returns a meaningless record, and the run must be
    /// dropped: an owner that cancels keeps no state of it (a later resume starts from the
    /// last record written).
    pub(crate) fn set_cancel(&mut self, cancel: Budget) {
        self.fitness.set_cancel(cancel.clone());
        if let Some(b) = &mut self.benchmark {
            b.set_cancel(cancel);
        }
    }

    /// The next job list of the generation under way (starting one if none is), the same
    /// list again until it is told; `None` once all are told (then
    /// [`PopulationRun::finish_generation`]) or the run has finished.
    pub(crate) fn next_games(&mut self) -> Option<JobList> {
        if self.stopped.is_some() {
            return None;
        }
        let (scoring, _) = self.scoring.get_or_insert_with(|| {
            let population = std::sync::Arc::new(self.population.clone());
            (
                self.fitness.score(population, self.generation),
                Instant::now(),
            )
        });
        scoring.next_list(&self.fitness)
    }

    /// The points of the list [`PopulationRun::next_games`] handed out, in job order.
    pub(crate) fn tell(&mut self, points: Vec<f64>) {
        if let Some((scoring, _)) = &mut self.scoring {
            scoring.tell(&self.fitness, points);
        }
    }

    /// Plays `list` on the current rayon pool (exactly as [`crate::tune::games::GameSetup::play_batch`]).
    pub(crate) fn play_here(&mut self, list: &JobList) -> Vec<f64> {
        match &mut self.scoring {
            Some((scoring, _)) => scoring.play_here(&self.fitness, list),
            None => vec![0.0; list.jobs.len()],
        }
    }

    /// Scores the generation whose lists are all told, measures its leaders on the benchmark
    /// panel when due, breeds the next population and returns the generation's record;
    /// `None` once the run has finished.
    pub(crate) fn finish_generation(&mut self) -> Option<GenerationRecord> {
        if self.stopped.is_some() {
            return None;
        }
        let (scoring, started) = self.scoring.take()?;
        let evaluation = scoring.finish(&self.fitness);
        let fitness = evaluation.fitness;
        let best = best_index(&fitness);
        let improved = self
            .hall_of_fame
            .as_ref()
            .is_none_or(|h| fitness[best] > h.fitness);
        if improved {
            self.hall_of_fame = Some(HallOfFame {
                weights: self.population[best].clone(),
                fitness: fitness[best],
                generation: self.generation,
            });
        }
        let hall_of_fame = self
            .hall_of_fame
            .clone()
            .expect("set on the first generation");
        let mut record = GenerationRecord {
            generation: self.generation,
            individuals: self
                .population
                .iter()
                .zip(&fitness)
                .enumerate()
                .map(|(i, (g, &f))| Individual {
                    weights: g.clone(),
                    fitness: f,
                    raced_games: evaluation.raced_games.as_ref().map(|games| games[i]),
                })
                .collect(),
            fitness: FitnessStats::of(&fitness),
            best_index: best,
            diversity: genome::diversity(&self.population),
            hall_of_fame,
            games_played: evaluation.games_played,
            stop: None,
            benchmark: None,
            champion: None,
            learner: None,
            breeder: self.breeder.checkpoint(),
            timing: Timing::default(),
        };
        record.stop = self.stop_after(self.generation, record.fitness.best);
        record.benchmark = self.measure_leaders(&record);
        record.champion = self.champion.clone();
        match record.stop {
            Some(reason) => self.stopped = Some(reason),
            None => {
                self.population = self.breed(&record);
                self.generation += 1;
            }
        }
        record.timing.wall_ms = started.elapsed().as_millis() as u64;
        Some(record)
    }

    /// On a measured generation, plays its leaders against the panel and lets each, best
    /// fitness first, challenge the champion.
    fn measure_leaders(&mut self, record: &GenerationRecord) -> Option<BenchmarkRecord> {
        let benchmark = self.benchmark.as_ref()?;
        if !benchmark
            .config()
            .measures(record.generation, record.stop.is_some())
        {
            return None;
        }
        let fitness: Vec<f64> = record.individuals.iter().map(|i| i.fitness).collect();
        let leaders: Vec<(usize, Vec<f64>)> = ranking(&fitness)
            .into_iter()
            .take(benchmark.config().leaders)
            .map(|i| (i, record.individuals[i].weights.clone()))
            .collect();
        let results = benchmark.measure(&leaders);
        let mut new_champion = false;
        for result in &results {
            let better = self
                .champion
                .as_ref()
                .is_none_or(|c| panel::beats(result, &c.panel));
            if better {
                self.champion = Some(Champion {
                    weights: result.weights.clone(),
                    generation: record.generation,
                    fitness: fitness[result.index],
                    panel: result.clone(),
                });
                new_champion = true;
            }
        }
        Some(BenchmarkRecord {
            panel: benchmark
                .config()
                .panel
                .iter()
                .map(|s| s.to_string())
                .collect(),
            leaders: results,
            new_champion,
        })
    }

    /// The run's champion so far (with a benchmark panel).
    pub fn champion(&self) -> Option<&Champion> {
        self.champion.as_ref()
    }

    /// Whether the run stops after generation `generation` with best fitness `best`, given the
    /// hall of fame as it stands after that generation.
    fn stop_after(&self, generation: u32, best: f64) -> Option<StopReason> {
        if self.config.target_fitness.is_some_and(|t| best >= t) {
            return Some(StopReason::TargetFitness);
        }
        if let (Some(n), Some(h)) = (self.config.stagnation, &self.hall_of_fame) {
            if generation - h.generation >= n {
                return Some(StopReason::Stagnation);
            }
        }
        if generation + 1 >= self.config.generations {
            return Some(StopReason::Generations);
        }
        None
    }

    /// The next generation, the breeder's, from a record's weights and fitness only (and
    /// the breeder's state).
    fn breed(&mut self, record: &GenerationRecord) -> Vec<Genome> {
        self.breeder.breed(record, &self.config.bounds)
    }

    pub fn is_finished(&self) -> bool {
        self.stopped.is_some()
    }

    /// Why the run finished, once it has.
    pub(crate) fn stop_reason(&self) -> Option<StopReason> {
        self.stopped
    }

    /// The generation the next step evaluates (the last one, once finished).
    pub fn generation(&self) -> u32 {
        self.generation
    }

    /// The current generation's genomes.
    pub fn population(&self) -> &[Genome] {
        &self.population
    }

    pub fn hall_of_fame(&self) -> Option<&HallOfFame> {
        self.hall_of_fame.as_ref()
    }

    pub(crate) fn config(&self) -> &GaConfig {
        &self.config
    }

    /// The run's features, in genome order.
    pub fn features(&self) -> &[Feature] {
        &self.features
    }

    /// Fitness games each generation plays (panel games aside).
    pub fn games_per_generation(&self) -> u64 {
        self.fitness.jobs(self.config.population).len() as u64
    }
}

/// One generation a step: its fitness games handed out as job lists (the games fixed in
/// advance, then one list per racing round), then its record.
impl Tuner for PopulationRun {
    fn ask(&mut self, control: &StepControl) -> Ask {
        self.set_cancel(control.cancel().clone());
        if let Some(list) = self.next_games() {
            return Ask::Games(list);
        }
        match self.finish_generation() {
            Some(record) => Ask::Record(Box::new(record)),
            None => Ask::Finished,
        }
    }

    fn tell(&mut self, points: Vec<f64>) {
        PopulationRun::tell(self, points)
    }

    fn play_here(&mut self, list: &JobList) -> Vec<f64> {
        PopulationRun::play_here(self, list)
    }

    fn stop_reason(&self) -> Option<StopReason> {
        PopulationRun::stop_reason(self)
    }

    fn length(&self) -> u64 {
        self.config().generations as u64
    }
}
