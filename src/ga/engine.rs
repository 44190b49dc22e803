//! The stepped GA: [`Evolution`] is a [`PopulationRun`] whose generations the GA's own
//! operators make ([`GaOperators`]: elites, then children of selected parent pairs, each
//! mutated). It evaluates one generation per step of its tuner, returns its
//! [`GenerationRecord`] and breeds the next generation from that record alone, so a run can be
//! stopped after any generation and resumed from its last record ([`Evolution::resume`]) with
//! exactly the generations an uninterrupted run would produce.

use super::config::{Bounds, GaConfig, InitKind};
use super::genome::{self, ranking};
use super::operators::{self, Crossover, Mutation, Selection};
use super::population::{Breeder, PopulationRun};
use crate::eval::Feature;
use crate::matches::game_rng;
use crate::tune::panel::Champion;
use crate::tune::tuner::{Ask, StepControl, Tuner};
use crate::tune::{ConfigError, GenerationRecord, Genome, HallOfFame, JobList, StopReason};

/// RNG stream of the first generation.
const INIT_STREAM: u64 = 0x696e_6974;
/// RNG stream of breeding (selection, crossover, mutation), one per generation.
const BREED_STREAM: u64 = 0x6272_6565;

/// The GA's breeder: its selection, crossover and mutation operators, its elitism and its
/// initialisation. It keeps no state between generations: the next one follows from a record
/// and the RNG stream of (seed, "breed", generation).
#[derive(Debug)]
struct GaOperators {
    seed: u64,
    size: usize,
    elite: usize,
    genes: usize,
    init_kind: InitKind,
    init_sigma: f64,
    /// The centre of an `around` initialisation.
    center: Option<Genome>,
    selection: Box<dyn Selection>,
    crossover: Box<dyn Crossover>,
    mutation: Box<dyn Mutation>,
}

impl GaOperators {
    fn new(config: &GaConfig) -> Result<GaOperators, ConfigError> {
        let resolved = config.validate()?;
        Ok(GaOperators {
            seed: config.seed,
            size: config.population,
            elite: config.elite,
            genes: resolved.features.len(),
            init_kind: config.init.kind,
            init_sigma: config.init.sigma,
            center: resolved.init_center,
            selection: operators::selection(&config.selection),
            crossover: operators::crossover(&config.crossover),
            mutation: operators::mutation(&config.mutation),
        })
    }
}

impl Breeder for GaOperators {
    fn first(&mut self, bounds: &Bounds) -> Vec<Genome> {
        let mut rng = game_rng(self.seed, &[INIT_STREAM]);
        (0..self.size)
            .map(|_| match (self.init_kind, &self.center) {
                (InitKind::Around, Some(c)) => genome::around(c, self.init_sigma, bounds, &mut rng),
                _ => genome::uniform(self.genes, bounds, &mut rng),
            })
            .collect()
    }

    /// Elites first, unchanged, then children of selected parent pairs, each mutated.
    fn breed(&mut self, record: &GenerationRecord, bounds: &Bounds) -> Vec<Genome> {
        let mut rng = game_rng(self.seed, &[BREED_STREAM, record.generation as u64]);
        let fitness: Vec<f64> = record.individuals.iter().map(|i| i.fitness).collect();
        let genomes: Vec<&Genome> = record.individuals.iter().map(|i| &i.weights).collect();
        let size = self.size;

        let mut next: Vec<Genome> = ranking(&fitness)
            .into_iter()
            .take(self.elite)
            .map(|i| genomes[i].clone())
            .collect();
        let needed = size - next.len();
        let pairs = needed.div_ceil(self.crossover.children_per_pair());
        let parents = self.selection.select(&fitness, 2 * pairs, &mut rng);
        for pair in parents.chunks_exact(2) {
            for mut child in
                self.crossover
                    .cross(genomes[pair[0]], genomes[pair[1]], bounds, &mut rng)
            {
                if next.len() == size {
                    break;
                }
                self.mutation.mutate(&mut child, bounds, &mut rng);
                next.push(child);
            }
        }
        next
    }

    /// The next generation follows from the record alone.
    fn checkpoint(&self) -> Option<serde_json::Value> {
        None
    }

    fn restore(&mut self, _records: &[GenerationRecord]) -> Result<(), ConfigError> {
        Ok(())
    }
}

/// A GA run, advanced one generation at a time.
#[derive(Debug)]
pub struct Evolution {
    run: PopulationRun,
}

impl Evolution {
    /// Validates `config` and draws the first generation.
    pub fn new(config: GaConfig) -> Result<Evolution, ConfigError> {
        Evolution::open(config, &[])
    }

    /// Continues a run from the record of its last evaluated generation, as saved by whoever
    /// ran it: the next generation is bred from that record exactly as the uninterrupted run
    /// bred it, so every later record is identical (wall times aside). The stop conditions are
    /// checked against `config`, so a finished run given more `generations` goes on.
    pub fn resume(config: GaConfig, last: &GenerationRecord) -> Result<Evolution, ConfigError> {
        Evolution::open(config, std::slice::from_ref(last))
    }

    fn open(config: GaConfig, records: &[GenerationRecord]) -> Result<Evolution, ConfigError> {
        let operators = Box::new(GaOperators::new(&config)?);
        Ok(Evolution {
            run: PopulationRun::open(config, operators, records)?,
        })
    }

    /// The run's champion so far (with a benchmark panel).
    pub fn champion(&self) -> Option<&Champion> {
        self.run.champion()
    }

    pub fn is_finished(&self) -> bool {
        self.run.is_finished()
    }

    /// Why the run finished, once it has.
    pub fn stop_reason(&self) -> Option<StopReason> {
        self.run.stop_reason()
    }

    /// The generation the next step evaluates (the last one, once finished).
    pub fn generation(&self) -> u32 {
        self.run.generation()
    }

    /// The current generation's genomes.
    pub fn population(&self) -> &[Genome] {
        self.run.population()
    }

    pub fn hall_of_fame(&self) -> Option<&HallOfFame> {
        self.run.hall_of_fame()
    }

    pub fn config(&self) -> &GaConfig {
        self.run.config()
    }

    /// The run's features, in genome order.
    pub fn features(&self) -> &[Feature] {
        self.run.features()
    }

    /// Fitness games each generation plays (panel games aside).
    pub fn games_per_generation(&self) -> u64 {
        self.run.games_per_generation()
    }
}

/// The GA's steps are its population frame's.
impl Tuner for Evolution {
    fn ask(&mut self, control: &StepControl) -> Ask {
        self.run.ask(control)
    }

    fn tell(&mut self, points: Vec<f64>) {
        self.run.tell(points)
    }

    fn play_here(&mut self, list: &JobList) -> Vec<f64> {
        self.run.play_here(list)
    }

    fn stop_reason(&self) -> Option<StopReason> {
        self.run.stop_reason()
    }

    fn length(&self) -> u64 {
        self.run.length()
    }
}
