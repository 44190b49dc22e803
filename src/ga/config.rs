//! The GA's configuration: one serde struct, JSON and TOML friendly, every field with a
//! default, presets (`abrams`, `hunter`) that partial documents override, and validation whose
//! errors name the field at fault and what it accepts.
//!
//! A configuration document is a [`GaConfig`] object with any subset of its fields, plus an
//! optional top-level `"preset"` naming the preset to start from:
//!
//! ```json
//! {"preset": "abrams", "population": 12, "selection": {"kind": "tournament", "k": 3}}
//! ```
//!
//! ```toml
//! preset = "hunter"
//! generations = 20
//! [fitness]
//! opponents = ["minimax:4", "pekar"]
//! mode = "mixed"
//! ```

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::agents::cost::{
    features_of, game_side_ms, leaf_cost, population_factors, search_side_ms, DECIDED_GAME_SHARE,
};
use crate::agents::spec::{FeatureChoice, WeightChoice};
use crate::agents::{AgentSpec, FileAccess, Profile};
use crate::eval::{feature_set, parse_features, Feature, FEATURE_SETS, MAX_WEIGHT};
use crate::game::{check_written, Position, Refused, Rules, SettingBound};
use crate::tune::games::remembers_roots;
pub(crate) use crate::tune::ConfigError;
pub(crate) use crate::tune::{
    agent_error, describe_bytes, BoardConfig, MAX_CORE_HOURS, MAX_RUN_STORAGE_BYTES,
};

/// Largest population.
pub(crate) const MAX_POPULATION: usize = 1000;
/// Largest number of generations.
pub(crate) const MAX_GENERATIONS: u32 = 10_000;
/// Deepest search of individuals and opponents: beyond this a single game takes minutes.
pub(crate) const MAX_DEPTH: u32 = Profile::Ga.limits().max_depth;
/// Most games per pairing (individual against individual or against an opponent).
pub(crate) const MAX_GAMES_PER_PAIR: u32 = 1000;
/// Most fixed opponents.
pub(crate) const MAX_OPPONENTS: usize = 16;
pub(crate) use crate::matches::MAX_OPENING_PLIES;
/// Most racing rounds: every round waits for its slowest game.
pub(crate) const MAX_RACING_ROUNDS: u32 = 32;

/// Bytes of one weight in a stored record: 17 significant digits, a sign, an exponent and a
/// comma at most.
const RECORD_WEIGHT_BYTES: u64 = 24;
/// Bytes of one individual in a record besides its weights (`fitness`, `raced_games`, keys).
const RECORD_INDIVIDUAL_BYTES: u64 = 64;
/// Bytes of a record besides its individuals and panel: statistics, timing, the row's other
/// columns and its share of the table's index.
const RECORD_FIXED_BYTES: u64 = 2048;
/// Bytes a panel agent adds to a record (its games' summary, the champion's test).
const RECORD_PANEL_AGENT_BYTES: u64 = 1024;

/// The names of the presets.
pub(crate) const PRESETS: &[&str] = &["abrams", "hunter", "mankalah", "main-job"];

/// The README's main job (`configs/main-job.toml`), built in so that the dashboard's first run
/// is the same run as `evolve --config configs/main-job.toml`.
const MAIN_JOB_TOML: &str = include_str!("../../configs/main-job.toml");

/// Declares a string-valued "kind" enum: serialised as its name, parsed with an error that
/// lists the names, so that a config error reads `selection.kind: unknown "foo", expected ...`.
macro_rules! kind_enum {
    ($(#[$meta:meta])* $name:ident { $($(#[$vmeta:meta])* $variant:ident => $text:literal $(| $alias:literal)*),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum $name {
            $($(#[$vmeta])* $variant),+
        }

        impl $name {
            /// Every value, in documentation order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            pub fn name(self) -> &'static str {
                match self {
                    $($name::$variant => $text),+
                }
            }

            fn expected() -> String {
                Self::ALL.iter().map(|k| k.name()).collect::<Vec<_>>().join(", ")
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.name())
            }
        }

        impl FromStr for $name {
            type Err = String;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                match s {
                    $($text $(| $alias)* => Ok($name::$variant),)+
                    other => Err(format!("unknown {other:?}, expected {}", Self::expected())),
                }
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.name())
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let text = String::deserialize(d)?;
                text.parse().map_err(serde::de::Error::custom)
            }
        }
    };
}

kind_enum! {
    /// How parents are chosen.
    SelectionKind {
        /// Fitness-proportional (the blog's "proportional to their fitness").
        Roulette => "roulette",
        /// The best of `k` individuals drawn uniformly.
        Tournament => "tournament",
        /// Linear ranking: probability proportional to rank (ties share their mean rank).
        Rank => "rank",
        /// Stochastic universal sampling: roulette with evenly spaced pointers.
        Sus => "sus",
    }
}

kind_enum! {
    /// How two parents make children.
    CrossoverKind {
        /// The blog's pair: one `average` child and one `hybrid` child.
        AverageHybrid => "average-hybrid" | "average+hybrid" | "blog",
        /// One child, the mean of the parents.
        Average => "average",
        /// One child: the genes before a random cut from one parent, the rest from the other.
        Hybrid => "hybrid",
        /// Two complementary children, each gene from either parent with probability 1/2.
        Uniform => "uniform",
        /// Two children, each gene uniform in the parents' interval widened by `alpha` of its
        /// length on both sides (BLX-alpha).
        Blend => "blend",
    }
}

kind_enum! {
    /// How the first generation is drawn.
    InitKind {
        /// Uniform in the bounds.
        Uniform => "uniform",
        /// Gaussian around `init.weights` with `init.sigma`, clamped to the bounds.
        Around => "around",
    }
}

kind_enum! {
    /// Whom individuals play to earn their fitness.
    FitnessMode {
        /// Every other member of the population (and optionally itself).
        RoundRobin => "round-robin" | "round_robin",
        /// A fixed list of agents.
        Opponents => "opponents",
        /// Both, weighted by `fitness.mixed_weight`.
        Mixed => "mixed",
    }
}

/// Bounds of every gene (weight).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Bounds {
    pub min: f64,
    pub max: f64,
}

impl Default for Bounds {
    fn default() -> Self {
        Bounds { min: 0.0, max: 1.0 }
    }
}

impl Bounds {
    #[inline]
    pub(crate) fn clamp(&self, x: f64) -> f64 {
        x.clamp(self.min, self.max)
    }

    #[inline]
    pub(crate) fn width(&self) -> f64 {
        self.max - self.min
    }

    pub(crate) fn contains(&self, x: f64) -> bool {
        (self.min..=self.max).contains(&x)
    }
}

/// The first generation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct InitConfig {
    pub kind: InitKind,
    /// The centre for `around`: a preset of the feature set (`"published"`) or explicit numbers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub weights: Option<WeightChoice>,
    /// Standard deviation of the Gaussian for `around`.
    pub sigma: f64,
}

impl Default for InitConfig {
    fn default() -> Self {
        InitConfig {
            kind: InitKind::Uniform,
            weights: None,
            sigma: 0.1,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SelectionConfig {
    pub kind: SelectionKind,
    /// Tournament size (only `tournament` uses it).
    pub k: usize,
}

impl Default for SelectionConfig {
    fn default() -> Self {
        SelectionConfig {
            kind: SelectionKind::Roulette,
            k: 3,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CrossoverConfig {
    pub kind: CrossoverKind,
    /// BLX-alpha widening (only `blend` uses it).
    pub alpha: f64,
}

impl Default for CrossoverConfig {
    fn default() -> Self {
        CrossoverConfig {
            kind: CrossoverKind::AverageHybrid,
            alpha: 0.5,
        }
    }
}

/// Gaussian mutation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MutationConfig {
    /// Probability that a gene of a child is mutated.
    pub rate: f64,
    /// Standard deviation of the Gaussian added to a mutated gene (in weight units).
    pub sigma: f64,
}

impl Default for MutationConfig {
    fn default() -> Self {
        MutationConfig {
            rate: 0.1,
            sigma: 0.03,
        }
    }
}

/// How fitness is measured.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FitnessConfig {
    pub mode: FitnessMode,
    /// Games per pairing, in colour-swapped pairs (so even): 2 is the blog's "twice,
    /// alternating who goes first", 10 is Hunter's "5 games going first and 5 going second".
    /// Applies to individual-individual pairings and to individual-opponent pairings.
    pub games_per_pair: u32,
    /// Also count games against itself (Hunter: "against the entire population including
    /// itself"). Such a game always scores exactly one of its two points for the individual,
    /// which plays both sides, so these games are credited without being played.
    pub self_play: bool,
    /// Fixed opponents for `opponents` and `mixed` (agent specs: `"minimax:4"`, `"pekar"`, or
    /// spec objects).
    #[serde(deserialize_with = "crate::tune::jobs::stored_agents")]
    pub opponents: Vec<AgentSpec>,
    /// In `mixed` mode, the weight of the opponents' score; the round robin gets the rest.
    pub mixed_weight: f64,
    /// Random sowings before the agents take over, shared by both games of a colour-swapped
    /// pair, so that deterministic players do not replay one game.
    pub opening_plies: u32,
    /// Against fixed opponents, give every individual of a generation the same openings and
    /// tie-breaking draws (common random numbers), so that differences in fitness within a
    /// generation come from the weights rather than from luckier openings.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub common_openings: bool,
    /// Noise-aware fitness against the fixed opponents: the same number of games, played in
    /// rounds, with those who cannot reach the leaders dropped between rounds and their games
    /// given to the close contenders.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub racing: Option<RacingConfig>,
}

/// Racing (`fitness.racing`): the opponent games of a generation are played in `rounds`
/// rounds. A unit is one colour-swapped pair against every opponent; each round shares its
/// part of the generation's units (population x games_per_pair / 2) evenly among the
/// individuals still racing. After every round but the last, an individual whose interval
/// (mean unit score + z x standard error) lies below the lowest interval of the `leaders`
/// best stops getting games and keeps the fitness it has.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RacingConfig {
    pub rounds: u32,
    /// How many of the best are always kept, and set the bar the others must reach.
    pub leaders: usize,
    /// Width of the intervals in standard errors: 1.96 is a two-sided 95% interval, larger
    /// drops fewer.
    pub z: f64,
}

impl Default for RacingConfig {
    fn default() -> Self {
        RacingConfig {
            rounds: 4,
            leaders: 2,
            z: 1.96,
        }
    }
}

impl Default for FitnessConfig {
    fn default() -> Self {
        FitnessConfig {
            mode: FitnessMode::RoundRobin,
            games_per_pair: 2,
            self_play: false,
            opponents: Vec::new(),
            mixed_weight: 0.5,
            opening_plies: 2,
            common_openings: false,
            racing: None,
        }
    }
}

/// The benchmark panel: fixed agents the generation's leaders play on openings fitness never
/// uses, for an absolute measure of progress (round-robin fitness is relative and stays near
/// 0.5 by construction) and to choose the run's champion.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BenchmarkConfig {
    /// The panel's agent specs; empty turns the benchmark off.
    #[serde(deserialize_with = "crate::tune::jobs::stored_agents")]
    pub panel: Vec<AgentSpec>,
    /// Colour-swapped pairs against each panel agent.
    pub pairs: u32,
    /// Measure every this many generations (and always the last).
    pub every: u32,
    /// How many of the generation's best (by fitness) play the panel.
    pub leaders: usize,
    /// Random sowings of the panel's openings.
    pub opening_plies: u32,
    /// Also measure each leader's perfect-move agreement on this many positions from real
    /// games with at most 20 seeds in the pits, solved exactly once when the run starts
    /// (`matches::agreement`); off when unset.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agreement: Option<u32>,
}

/// Most positions of a run's agreement set.
pub(crate) const MAX_AGREEMENT_PANEL_POSITIONS: u32 = 10_000;

/// The default panel: depth-4 minimax and the published hunter10, divilly6 and abrams3
/// players at depth 4.
pub(crate) const DEFAULT_PANEL: [&str; 4] = [
    "minimax:4",
    "heuristic:hunter10:published:4",
    "heuristic:divilly6:published:4",
    "heuristic:abrams3:published:4",
];

impl Default for BenchmarkConfig {
    fn default() -> Self {
        BenchmarkConfig {
            panel: DEFAULT_PANEL
                .iter()
                .filter_map(|s| AgentSpec::parse(s).ok())
                .collect(),
            pairs: 8,
            every: 1,
            leaders: 1,
            opening_plies: 4,
            agreement: None,
        }
    }
}

impl BenchmarkConfig {
    pub fn is_on(&self) -> bool {
        !self.panel.is_empty()
    }

    /// Whether generation `generation` is measured (the last one always is).
    pub(crate) fn measures(&self, generation: u32, last: bool) -> bool {
        self.is_on() && (last || generation % self.every.max(1) == 0)
    }

    /// How many of a run's `generations` generations are measured: every `every`-th from
    /// the first, and the last.
    pub(crate) fn measured_generations(&self, generations: u32) -> u32 {
        if !self.is_on() || generations == 0 {
            return 0;
        }
        let every = self.every.max(1);
        let regular = (generations - 1) / every + 1;
        regular + u32::from((generations - 1) % every != 0)
    }

    /// Panel games in a measured generation.
    pub(crate) fn games_per_measure(&self) -> u64 {
        self.leaders as u64 * self.panel.len() as u64 * 2 * self.pairs as u64
    }
}

/// Everything a GA run depends on. A run is a pure function of this (wall times aside).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct GaConfig {
    pub seed: u64,
    pub population: usize,
    pub generations: u32,
    /// A named set (`"hunter10"`, `"abrams3"`, `"divilly6"`), names joined by `+`, or a list of
    /// feature names.
    #[serde(deserialize_with = "de_features")]
    pub features: FeatureChoice,
    pub bounds: Bounds,
    pub init: InitConfig,
    pub selection: SelectionConfig,
    pub crossover: CrossoverConfig,
    pub mutation: MutationConfig,
    /// The best this many individuals pass to the next generation unchanged.
    pub elite: usize,
    /// Search depth of the individuals (turns; an extra turn does not use depth).
    pub depth: u32,
    pub fitness: FitnessConfig,
    pub benchmark: BenchmarkConfig,
    pub board: BoardConfig,
    pub rules: Rules,
    /// The pie rule (docs/reference/rules.md): every game starts with South's first move
    /// earning no extra turn and North's choice to swap.
    pub pie: bool,
    /// Stop after this many generations in a row without a better hall-of-fame individual.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stagnation: Option<u32>,
    /// Stop once a generation's best fitness reaches this.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target_fitness: Option<f64>,
}

impl Default for GaConfig {
    fn default() -> Self {
        GaConfig {
            seed: 1,
            population: 20,
            generations: 75,
            features: FeatureChoice::Set("hunter10".into()),
            bounds: Bounds::default(),
            init: InitConfig::default(),
            selection: SelectionConfig::default(),
            crossover: CrossoverConfig::default(),
            mutation: MutationConfig::default(),
            elite: 1,
            depth: 4,
            fitness: FitnessConfig::default(),
            benchmark: BenchmarkConfig::default(),
            board: BoardConfig::default(),
            rules: Rules::Standard,
            pie: false,
            stagnation: None,
            target_fitness: None,
        }
    }
}

fn de_features<'de, D: Deserializer<'de>>(d: D) -> Result<FeatureChoice, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Raw {
        One(String),
        Many(Vec<String>),
    }
    let raw = Raw::deserialize(d).map_err(|_| {
        serde::de::Error::custom(
            "expected a feature set name (such as \"hunter10\") or a list of feature names",
        )
    })?;
    match raw {
        Raw::One(name) => {
            // Checked here so the error points at `features`, not at validation time.
            parse_features(&name).map_err(serde::de::Error::custom)?;
            Ok(FeatureChoice::Set(name))
        }
        Raw::Many(names) => names
            .iter()
            .map(|n| n.parse::<Feature>())
            .collect::<Result<Vec<_>, _>>()
            .map(FeatureChoice::List)
            .map_err(serde::de::Error::custom),
    }
}

/// Features, bounds and starting weights resolved from a valid config.
#[derive(Clone, Debug, PartialEq)]
pub struct Resolved {
    pub features: Vec<Feature>,
    /// The centre of an `around` initialisation.
    pub init_center: Option<Vec<f64>>,
    pub start: Position,
}

/// The GA's numeric settings by their dotted keys, each with its range and help, declared
/// once: [`GaConfig::validate`] checks a config against them and the dashboard's form makes its
/// fields from them (a test fails on a numeric field without one). Where a maximum depends on
/// other settings (`up_to`), `max` is the absolute limit and the check lowers it to the
/// config's figure. The seed (any number) and the board (checked as a position) are not here.
pub(crate) const GA_BOUNDS: &[SettingBound] = &[
    SettingBound::whole(
        "population",
        2.0,
        MAX_POPULATION as f64,
        "Weight vectors in each generation.",
    ),
    SettingBound::whole(
        "generations",
        1.0,
        MAX_GENERATIONS as f64,
        "Generations the run plays.",
    ),
    SettingBound::whole(
        "elite",
        0.0,
        (MAX_POPULATION - 1) as f64,
        "The best individuals passed on unchanged.",
    )
    .up_to("population − 1"),
    SettingBound::whole(
        "stagnation",
        1.0,
        MAX_GENERATIONS as f64,
        "Stop after this many generations without a better hall of fame.",
    )
    .optional(),
    SettingBound::real(
        "target_fitness",
        0.0,
        1.0,
        "Stop once a generation's best reaches this.",
    )
    .optional(),
    SettingBound::whole(
        "depth",
        1.0,
        MAX_DEPTH as f64,
        "Search depth of every individual, in turns.",
    ),
    SettingBound::real(
        "bounds.min",
        -MAX_WEIGHT,
        MAX_WEIGHT,
        "The lowest a weight may be; below bounds.max.",
    )
    .stepping(0.1),
    SettingBound::real(
        "bounds.max",
        -MAX_WEIGHT,
        MAX_WEIGHT,
        "The highest a weight may be; above bounds.min.",
    )
    .stepping(0.1),
    SettingBound::real(
        "init.sigma",
        0.0,
        2.0 * MAX_WEIGHT,
        "Spread of the first generation around the starting weights.",
    )
    .up_to("bounds width"),
    SettingBound::whole(
        "selection.k",
        1.0,
        MAX_POPULATION as f64,
        "Tournament size: how many individuals compete to be a parent.",
    )
    .up_to("population"),
    SettingBound::real(
        "crossover.alpha",
        0.0,
        2.0,
        "Blend crossover: how far beyond its parents a child may reach.",
    )
    .stepping(0.05),
    SettingBound::real(
        "mutation.rate",
        0.0,
        1.0,
        "Probability that a gene of a child mutates.",
    ),
    SettingBound::real(
        "mutation.sigma",
        0.0,
        2.0 * MAX_WEIGHT,
        "Standard deviation of a mutation's Gaussian step.",
    )
    .up_to("bounds width")
    .stepping(0.005),
    SettingBound::whole(
        "fitness.games_per_pair",
        2.0,
        MAX_GAMES_PER_PAIR as f64,
        "Games of each pairing, in colour-swapped pairs: an even number.",
    )
    .stepping(2.0),
    SettingBound::real(
        "fitness.mixed_weight",
        0.0,
        1.0,
        "Mixed fitness: the share of the score from the games against the fixed opponents.",
    )
    .stepping(0.05),
    SettingBound::whole(
        "fitness.racing.rounds",
        2.0,
        MAX_RACING_ROUNDS as f64,
        "Noise-aware fitness: the opponent games are played in rounds, and those who cannot reach the leaders stop getting games. Empty for no racing.",
    )
    .up_to("games_per_pair / 2")
    .optional(),
    SettingBound::whole(
        "fitness.racing.leaders",
        1.0,
        MAX_POPULATION as f64,
        "Racing: how many of the best always keep playing, and set the bar the others must reach.",
    )
    .up_to("population"),
    SettingBound::real(
        "fitness.racing.z",
        0.0,
        10.0,
        "Racing: the width of the intervals in standard errors (1.96: 95%); larger drops fewer.",
    ),
    SettingBound::whole(
        "fitness.opening_plies",
        0.0,
        MAX_OPENING_PLIES as f64,
        "Random sowings shared by both games of a pair.",
    ),
];

/// The benchmark panel's numeric settings, by their dotted keys: a GA run's and a learning
/// run's (which plays one set of weights, so `leaders` is 1 and `every` is not its).
pub(crate) const BENCHMARK_BOUNDS: &[SettingBound] = &[
    SettingBound::whole(
        "benchmark.pairs",
        1.0,
        (MAX_GAMES_PER_PAIR / 2) as f64,
        "Colour-swapped pairs of games against each panel agent.",
    ),
    SettingBound::whole(
        "benchmark.every",
        1.0,
        MAX_GENERATIONS as f64,
        "Measure every this many generations (and always the last).",
    ),
    SettingBound::whole(
        "benchmark.leaders",
        1.0,
        MAX_POPULATION as f64,
        "How many of a generation's best play the panel.",
    )
    .up_to("population"),
    SettingBound::whole(
        "benchmark.opening_plies",
        0.0,
        MAX_OPENING_PLIES as f64,
        "Random sowings of the panel's openings.",
    ),
    SettingBound::whole(
        "benchmark.agreement",
        1.0,
        MAX_AGREEMENT_PANEL_POSITIONS as f64,
        "Also measure perfect-move agreement on this many solved endgame positions. Empty for none.",
    )
    .optional(),
];

/// The bound of the setting at `key` in `bounds`. Every key asked for is in its table (a test
/// reads each table's keys).
pub(crate) fn bound_of(bounds: &[SettingBound], key: &str) -> Option<SettingBound> {
    bounds.iter().find(|b| b.name == key).copied()
}

impl GaConfig {
    /// A named preset: `abrams` (the blog), `hunter` (Hunter's thesis), `mankalah` (the
    /// Manchester engine's game: Kalah(7,7) with the pie rule) or `main-job` (the README's main
    /// job: thirteen features from random weights in about two minutes on two cores).
    pub fn preset(name: &str) -> Result<GaConfig, ConfigError> {
        let base = GaConfig::default();
        match name {
            "abrams" | "blog" => Ok(GaConfig {
                population: 40,
                generations: 75,
                depth: 7,
                features: FeatureChoice::Set("abrams3".into()),
                selection: SelectionConfig {
                    kind: SelectionKind::Roulette,
                    ..base.selection.clone()
                },
                crossover: CrossoverConfig {
                    kind: CrossoverKind::AverageHybrid,
                    ..base.crossover.clone()
                },
                mutation: MutationConfig {
                    sigma: 0.03,
                    ..base.mutation.clone()
                },
                fitness: FitnessConfig {
                    mode: FitnessMode::RoundRobin,
                    games_per_pair: 2,
                    self_play: false,
                    ..base.fitness.clone()
                },
                // 256 panel games beside 1,560 of fitness: 16% more a generation.
                benchmark: BenchmarkConfig {
                    pairs: 32,
                    ..base.benchmark.clone()
                },
                ..base
            }),
            "hunter" => Ok(GaConfig {
                population: 50,
                generations: 250,
                depth: 4,
                features: FeatureChoice::Set("hunter10".into()),
                mutation: MutationConfig {
                    rate: 0.1,
                    ..base.mutation.clone()
                },
                fitness: FitnessConfig {
                    mode: FitnessMode::RoundRobin,
                    games_per_pair: 10,
                    self_play: true,
                    ..base.fitness.clone()
                },
                // Two leaders, 1,024 panel games beside 12,250 of fitness: 8% more.
                benchmark: BenchmarkConfig {
                    pairs: 64,
                    leaders: 2,
                    ..base.benchmark.clone()
                },
                ..base
            }),
            // The Manchester ManKalah engine's game: Kalah(7,7), standard captures, the pie rule.
            // Hunter's GA otherwise, at depth 3: a 7x7 game is longer and its search wider.
            // Fitness and panel games start from the real start position, as the engine's
            // games do: random opening plies would play the first move and the swap decision
            // at random, the part of the game the pie rule is about. The players' random
            // tie-breaking (seeded) varies the games.
            "mankalah" => {
                let hunter = GaConfig::preset("hunter")?;
                Ok(GaConfig {
                    board: BoardConfig { pits: 7, seeds: 7 },
                    rules: Rules::Standard,
                    pie: true,
                    depth: 3,
                    generations: 100,
                    fitness: FitnessConfig {
                        opening_plies: 0,
                        ..hunter.fitness.clone()
                    },
                    benchmark: BenchmarkConfig {
                        opening_plies: 0,
                        ..hunter.benchmark.clone()
                    },
                    ..hunter
                })
            }
            // A committed file, checked by the tests: it always reads.
            "main-job" => toml::from_str(MAIN_JOB_TOML).map_err(|e| ConfigError::Parse {
                field: "preset".into(),
                reason: format!("configs/main-job.toml: {e}"),
            }),
            other => Err(ConfigError::invalid(
                "preset",
                format!("unknown {other:?}, expected {}", PRESETS.join(", ")),
            )),
        }
    }

    pub fn to_json_pretty(&self) -> String {
        // Serialising plain data with string keys cannot fail.
        serde_json::to_string_pretty(self).expect("GaConfig serialises")
    }

    /// This config with the fields of `patch` (a partial config object) laid over it; nested
    /// objects merge field by field, anything else replaces. Not validated.
    pub fn with_overrides(&self, patch: &serde_json::Value) -> Result<GaConfig, ConfigError> {
        let mut merged = serde_json::to_value(self).map_err(|e| ConfigError::Parse {
            field: String::new(),
            reason: e.to_string(),
        })?;
        merge(&mut merged, patch);
        ConfigError::read(merged, "")
    }

    /// This config with its agents' model names replaced by the files `files` resolves them
    /// to ([`AgentSpec::locate`]): what a server evolves, while it stores and shows the names.
    pub(crate) fn locate_agents(&self, files: &FileAccess) -> Result<GaConfig, ConfigError> {
        let mut config = self.clone();
        for (list, specs) in [
            ("fitness.opponents", &mut config.fitness.opponents),
            ("benchmark.panel", &mut config.benchmark.panel),
        ] {
            for (i, spec) in specs.iter_mut().enumerate() {
                *spec = spec
                    .locate(files)
                    .map_err(|e| agent_error(&format!("{list}[{i}]"), &e))?;
            }
        }
        Ok(config)
    }

    /// Games one generation plays (self-play games are credited, not played).
    pub fn games_per_generation(&self) -> u64 {
        let n = self.population as u64;
        let per_pair = self.fitness.games_per_pair as u64;
        let round_robin = n * n.saturating_sub(1) / 2 * per_pair;
        let opponents = n * self.fitness.opponents.len() as u64 * per_pair;
        match self.fitness.mode {
            FitnessMode::RoundRobin => round_robin,
            FitnessMode::Opponents => opponents,
            FitnessMode::Mixed => round_robin + opponents,
        }
    }

    /// An upper estimate of the bytes one generation's stored row takes with `features`
    /// weights an individual: its record (every individual, the hall of fame, the panel's
    /// results) and the columns beside it. Calibrated on real records: with the hunter preset
    /// (10 features, its panel) 40 individuals take 16.4 KB, estimated at about 21 KB.
    pub fn estimated_record_bytes(&self, features: usize) -> u64 {
        let base = record_bytes(self.population as u64, features, self.benchmark.panel.len());
        // Every measured leader keeps its points in each pair against each panel agent (the
        // champion's paired test reads them), and the champion's are kept beside them: with a
        // large panel these are most of a record.
        let panel = self.benchmark.panel.len() as u64;
        let leaders = (self.benchmark.leaders as u64).min(self.population as u64) + 1;
        let pair_points = leaders * panel * u64::from(self.benchmark.pairs) * PAIR_POINT_BYTES;
        base + pair_points
    }

    /// An upper estimate of the bytes a whole run stores: every generation's row, the panel's
    /// results in the measured generations' only.
    pub fn estimated_storage_bytes(&self, features: usize) -> u64 {
        let measured = self.benchmark.measured_generations(self.generations);
        let unmeasured = u64::from(self.generations - measured);
        let plain = record_bytes(self.population as u64, features, 0);
        u64::from(measured) * self.estimated_record_bytes(features) + unmeasured * plain
    }

    /// A rough estimate of a whole run's cost in core-hours, from the cost model
    /// (`crate::agents::cost`): each game costs its two sides, an individual's side a
    /// search's (`search_side_ms`) and an opponent's or panel agent's what `game_side_ms`
    /// gives for its kind (an `mcts:1000000` opponent costs some 40 s a game). Used to refuse
    /// runs that would take days; checked within 2x of measured runs.
    pub fn estimated_core_hours(&self) -> f64 {
        let (pits, seeds) = (self.board.pits, self.board.seeds);
        let leaf = leaf_cost(&features_of(&self.features), pits);
        let (remembered, untuned) = population_factors(pits, seeds, self.depth);
        let me = untuned * search_side_ms(self.depth, pits, seeds, leaf);
        let n = self.population as f64;
        let per_pair = self.fitness.games_per_pair as f64;
        // In fitness games the individuals and the fixed-depth search opponents remember
        // their root results; other opponents (MCTS, budgets, exact play) search afresh.
        let me_fitness = remembered * me;
        let round_robin = n * (n - 1.0).max(0.0) / 2.0 * per_pair * 2.0 * me_fitness;
        let opponents: f64 = self
            .fitness
            .opponents
            .iter()
            .map(|o| {
                let share = if remembers_roots(o) { remembered } else { 1.0 };
                n * per_pair * (me_fitness + share * game_side_ms(o, pits, seeds))
            })
            .sum();
        // Fitness games stop once decided; the panel's are played to the end.
        let fitness_ms = DECIDED_GAME_SHARE
            * match self.fitness.mode {
                FitnessMode::RoundRobin => round_robin,
                FitnessMode::Opponents => opponents,
                FitnessMode::Mixed => round_robin + opponents,
            };
        // The panel plays in the measured generations only, the first and last among them:
        // counted exactly, since a short run measures a larger share of its generations.
        let per_agent = self.benchmark.leaders as f64 * 2.0 * self.benchmark.pairs as f64;
        let measure_ms: f64 = self
            .benchmark
            .panel
            .iter()
            .map(|a| per_agent * (me + game_side_ms(a, pits, seeds)))
            .sum();
        let panel_ms = measure_ms * self.benchmark.measured_generations(self.generations) as f64;
        (fitness_ms * self.generations as f64 + panel_ms) / 3_600_000.0
    }

    /// Panel games a generation plays on average (measured generations only play them).
    pub fn benchmark_games_per_generation(&self) -> f64 {
        if !self.benchmark.is_on() {
            return 0.0;
        }
        self.benchmark.games_per_measure() as f64 / self.benchmark.every.max(1) as f64
    }

    /// Checks every field and resolves the features and initial weights. Long on purpose: the
    /// checks run in the order of the config's fields, so each field's rule is found where a
    /// reader of the config expects it, and later checks rely on earlier ones.
    pub fn validate(&self) -> Result<Resolved, ConfigError> {
        self.check_bounds()?;

        let features = match &self.features {
            FeatureChoice::Set(name) => {
                parse_features(name).map_err(|e| ConfigError::invalid("features", e.to_string()))?
            }
            FeatureChoice::List(list) => list.clone(),
        };
        if features.is_empty() || features.len() > 32 {
            return Err(ConfigError::invalid(
                "features",
                format!("must list 1 to 32 features, got {}", features.len()),
            ));
        }
        for (i, f) in features.iter().enumerate() {
            if features[..i].contains(f) {
                return Err(ConfigError::invalid(
                    "features",
                    format!("{f} is listed twice"),
                ));
            }
        }

        let init_center = match (self.init.kind, &self.init.weights) {
            (InitKind::Uniform, _) => None,
            (InitKind::Around, None) => {
                return Err(ConfigError::invalid(
                    "init.weights",
                    "init kind \"around\" needs weights: a preset name such as \"published\" or a list of numbers",
                ))
            }
            (InitKind::Around, Some(choice)) => {
                Some(self.resolve_weights(choice, &features)?)
            }
        };

        let fit = &self.fitness;
        if fit.opponents.len() > MAX_OPPONENTS {
            return Err(ConfigError::invalid(
                "fitness.opponents",
                format!(
                    "at most {MAX_OPPONENTS} opponents, got {}",
                    fit.opponents.len()
                ),
            ));
        }
        if fit.mode != FitnessMode::RoundRobin && fit.opponents.is_empty() {
            return Err(ConfigError::invalid(
                "fitness.opponents",
                format!(
                    "fitness mode {} needs at least one opponent (such as \"minimax:4\" or \"pekar\")",
                    fit.mode
                ),
            ));
        }
        for (i, spec) in fit.opponents.iter().enumerate() {
            check_opponent(i, spec)?;
        }

        self.check_benchmark()?;
        let start = Position::start(self.board.pits, self.board.seeds)
            .map_err(|e| ConfigError::invalid("board", e.to_string()))?
            .with_pie(self.pie);

        let hours = self.estimated_core_hours();
        if hours > MAX_CORE_HOURS {
            return Err(ConfigError::invalid(
                "generations",
                format!(
                    "this run would play {} games a generation for {} generations at depth {}, about {} core-hours by a rough estimate; at most {MAX_CORE_HOURS:.0} are allowed: lower population, generations, fitness.games_per_pair, depth, or the cost of the opponents and panel agents",
                    crate::game::grouped(self.games_per_generation()),
                    crate::game::grouped(u64::from(self.generations)),
                    self.depth,
                    crate::game::grouped(hours.round() as u64)
                ),
            ));
        }

        let bytes = self.estimated_storage_bytes(features.len());
        if bytes > MAX_RUN_STORAGE_BYTES {
            return Err(ConfigError::invalid(
                "generations",
                format!(
                    "this run would store about {} of generation records ({} a generation of {} individuals with {} weights, for {} generations); at most {} are allowed: lower population, generations or the number of features",
                    describe_bytes(bytes),
                    describe_bytes(self.estimated_record_bytes(features.len())),
                    self.population,
                    features.len(),
                    self.generations,
                    describe_bytes(MAX_RUN_STORAGE_BYTES),
                ),
            ));
        }

        Ok(Resolved {
            features,
            init_center,
            start,
        })
    }

    fn resolve_weights(
        &self,
        choice: &WeightChoice,
        features: &[Feature],
    ) -> Result<Vec<f64>, ConfigError> {
        let values = match choice {
            WeightChoice::Values(values) => values.clone(),
            WeightChoice::Preset(name) => {
                let set = match &self.features {
                    FeatureChoice::Set(set) => feature_set(set),
                    FeatureChoice::List(_) => None,
                };
                let Some(set) = set else {
                    return Err(ConfigError::invalid(
                        "init.weights",
                        format!(
                            "preset {name:?} needs a named feature set ({}); give a list of numbers for other features",
                            FEATURE_SETS.iter().map(|s| s.name).collect::<Vec<_>>().join(", ")
                        ),
                    ));
                };
                set.preset(name)
                    .map_err(|reason| ConfigError::invalid("init.weights", reason.to_string()))?
                    .to_vec()
            }
        };
        if values.len() != features.len() {
            return Err(ConfigError::invalid(
                "init.weights",
                format!(
                    "{} features need {} weights, got {}",
                    features.len(),
                    features.len(),
                    values.len()
                ),
            ));
        }
        if let Some(w) = values.iter().find(|w| !w.is_finite()) {
            return Err(ConfigError::invalid(
                "init.weights",
                format!("weights must be finite numbers, got {w}"),
            ));
        }
        Ok(values)
    }
}

/// Opponents must be reproducible and finish in reasonable time.
impl GaConfig {
    fn check_benchmark(&self) -> Result<(), ConfigError> {
        check_benchmark(&self.benchmark, self.population)
    }
}

impl GaConfig {
    /// What racing needs beyond its settings' ranges (checked with the others').
    fn check_racing(&self) -> Result<(), ConfigError> {
        if self.fitness.mode == FitnessMode::RoundRobin {
            return Err(ConfigError::invalid(
                "fitness.racing",
                "racing shares out the games against fixed opponents, so it needs fitness mode opponents or mixed",
            ));
        }
        if self.fitness.games_per_pair < 4 {
            return Err(ConfigError::invalid(
                "fitness.racing.rounds",
                format!(
                    "racing plays at least 2 rounds of a colour-swapped pair each, so it needs fitness.games_per_pair of at least 4, got {}",
                    self.fitness.games_per_pair
                ),
            ));
        }
        Ok(())
    }

    /// Checks every numeric setting against [`GA_BOUNDS`] (the panel's are
    /// `check_benchmark`'s): first those with a fixed range, then (the population and the
    /// bounds being in order) those whose maximum depends on the config, at its figure
    /// here, so a message names the limit that applies ("elite: must be a whole number 0 to 19, got 20").
    fn check_bounds(&self) -> Result<(), ConfigError> {
        // Serialising plain data fails only on a map with non-string keys, which a GA config
        // has none of. A non-finite number is written as null, which its range refuses, but
        // which an optional setting reads as left out: the one optional real is seen to here.
        if let Some(t) = self.target_fitness.filter(|t| !t.is_finite()) {
            let range = bound_of(GA_BOUNDS, "target_fitness").map(|b| b.range());
            return Err(ConfigError::invalid(
                "target_fitness",
                format!("must be {}, got {t}", range.unwrap_or_default()),
            ));
        }
        let written = serde_json::to_value(self)
            .map_err(|e| ConfigError::invalid("config", e.to_string()))?;
        let tournament = self.selection.kind == SelectionKind::Tournament;
        let skip = |key: &str| key == "selection.k" && !tournament;
        // The settings with a fixed range first: those the others' limits are figured from.
        let relative = |key: &str| bound_of(GA_BOUNDS, key).is_some_and(|b| !b.up_to.is_empty());
        check_written(
            &written,
            GA_BOUNDS,
            |_| None,
            |key| skip(key) || relative(key),
        )
        .map_err(refused)?;
        let b = self.bounds;
        if b.min >= b.max {
            return Err(ConfigError::invalid(
                "bounds",
                format!("min must be below max, got min {} and max {}", b.min, b.max),
            ));
        }
        if self.fitness.games_per_pair % 2 != 0 {
            return Err(ConfigError::invalid(
                "fitness.games_per_pair",
                format!(
                    "must be an even number (games come in colour-swapped pairs), got {}",
                    self.fitness.games_per_pair
                ),
            ));
        }
        if self.fitness.racing.is_some() {
            self.check_racing()?;
        }
        let population = self.population as f64;
        let cap = |key: &str| match key {
            "elite" => Some(population - 1.0),
            "selection.k" | "fitness.racing.leaders" => Some(population),
            "init.sigma" | "mutation.sigma" => Some(b.width()),
            "fitness.racing.rounds" => Some(f64::from(self.fitness.games_per_pair / 2)),
            _ => None,
        };
        // The fixed ranges passed above: only the relative ones are left.
        check_written(&written, GA_BOUNDS, cap, |key| skip(key) || !relative(key)).map_err(refused)
    }
}

/// A setting its bound refuses, as the config's error.
fn refused(e: Refused) -> ConfigError {
    ConfigError::invalid(e.key, e.why.to_string())
}

fn check_opponent(i: usize, spec: &AgentSpec) -> Result<(), ConfigError> {
    check_agent(&format!("fitness.opponents[{i}]"), spec)
}

/// Checks an agent of a GA config (an opponent or a panel agent) under the GA's limits.
/// Checks a benchmark panel's settings; `max_leaders` is how many individuals could play it.
pub(crate) fn check_benchmark(b: &BenchmarkConfig, max_leaders: usize) -> Result<(), ConfigError> {
    if b.panel.len() > MAX_OPPONENTS {
        return Err(ConfigError::invalid(
            "benchmark.panel",
            format!("at most {MAX_OPPONENTS} agents, got {}", b.panel.len()),
        ));
    }
    for (i, spec) in b.panel.iter().enumerate() {
        check_agent(&format!("benchmark.panel[{i}]"), spec)?;
    }
    let written = serde_json::json!({
        "benchmark": serde_json::to_value(b)
            .map_err(|e| ConfigError::invalid("benchmark", e.to_string()))?
    });
    let cap = |key: &str| (key == "benchmark.leaders").then_some(max_leaders as f64);
    check_written(&written, BENCHMARK_BOUNDS, cap, |_| false).map_err(refused)
}

pub(crate) fn check_agent(prefix: &str, spec: &AgentSpec) -> Result<(), ConfigError> {
    spec.check(Profile::Ga).map_err(|e| agent_error(prefix, &e))
}

/// Lays `patch` over `base`: objects merge key by key, anything else replaces.
pub(crate) fn merge(base: &mut serde_json::Value, patch: &serde_json::Value) {
    match (base, patch) {
        (serde_json::Value::Object(b), serde_json::Value::Object(p)) => {
            for (k, v) in p {
                match b.get_mut(k) {
                    Some(slot) => merge(slot, v),
                    None => {
                        b.insert(k.clone(), v.clone());
                    }
                }
            }
        }
        (slot, value) => *slot = value.clone(),
    }
}

/// An upper estimate of the bytes of one stored generation row whose record holds
/// `individuals` individuals of `features` weights and the results of `panel` panel agents
/// (see [`GaConfig::estimated_record_bytes`]; learning runs' checkpoints are such rows too).
pub(crate) fn record_bytes(individuals: u64, features: usize, panel: usize) -> u64 {
    let weights = features as u64 * RECORD_WEIGHT_BYTES;
    let individuals = individuals * (RECORD_INDIVIDUAL_BYTES + weights);
    // The hall of fame in the record and the best weights in their own column.
    let best = 2 * weights;
    let panel = panel as u64 * RECORD_PANEL_AGENT_BYTES;
    RECORD_FIXED_BYTES + individuals + best + panel
}

/// One pair's points in a stored panel result, at most: `1.5,` and the like in JSON.
pub(crate) const PAIR_POINT_BYTES: u64 = 6;

#[cfg(test)]
mod tests {
    use super::*;

    /// A number that is not one is refused, even in an optional setting, where JSON's null
    /// (which it is written as) would mean "left out".
    #[test]
    fn non_finite_settings_are_refused() {
        for t in [f64::NAN, f64::INFINITY] {
            let config = GaConfig {
                target_fitness: Some(t),
                ..GaConfig::default()
            };
            match config.validate() {
                Err(ConfigError::Invalid { field, reason }) => {
                    assert_eq!(field, "target_fitness");
                    assert!(reason.starts_with("must be 0 to 1, got"), "{reason}");
                }
                Err(e) => panic!("{e}"),
                Ok(_) => panic!("{t} accepted"),
            }
        }
        let config = GaConfig {
            mutation: MutationConfig {
                rate: f64::NAN,
                ..MutationConfig::default()
            },
            ..GaConfig::default()
        };
        assert!(config.validate().is_err());
    }

    /// The estimate counts the panel's measures as the run makes them.
    #[test]
    fn measured_generations_count_the_runs_measures() {
        for every in [1, 2, 3, 10] {
            for generations in 1..=25 {
                let benchmark = BenchmarkConfig {
                    every,
                    ..BenchmarkConfig::default()
                };
                let made = (0..generations)
                    .filter(|&g| benchmark.measures(g, g + 1 == generations))
                    .count() as u32;
                assert_eq!(benchmark.measured_generations(generations), made);
            }
        }
        let off = BenchmarkConfig {
            panel: Vec::new(),
            ..BenchmarkConfig::default()
        };
        assert_eq!(off.measured_generations(10), 0);
    }
}
