//! `kalah-tuner learn`: tunes weights by temporal-difference learning from self-play
//! (`--method td|td-leaf`, [`crate::rl::td`]) or by Texel-style fitting to labelled positions
//! (`--method texel`, [`crate::rl::texel`]) and writes the same export document as `evolve`. The weights are measured against a benchmark panel at checkpoints, on openings
//! learning never sees; the exported player is the champion of those measurements, chosen as
//! a GA run's is (a later checkpoint replaces it only when it wins a paired test), so Ctrl-C
//! keeps the best measured so far.

use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::time::Instant;

use anyhow::Result;
use clap::Args;

use super::console::{progress_bar, stop_flag, write_atomically, CpuBudget};
use super::{parse_rules, thread_pool, usage};
use crate::agents::spec::{FeatureChoice, WeightChoice};
use crate::agents::{AgentSpec, Ties};
use crate::eval::Feature;
use crate::eval::{feature_set, parse_features};
use crate::ga::benchmark::{beats, Benchmark, PanelResult};
use crate::ga::{BenchmarkConfig, ExportDocument, TunerConfig};
use crate::game::{parse_board, Position, Rules};
use crate::rl::td::{TdConfig, TdLearner, TdMethod};
use crate::rl::texel::{TexelConfig, TexelFitter};
use crate::search::Depth;

#[derive(Args, Debug)]
pub struct LearnArgs {
    /// td: TD(lambda) on the positions moved from; td-leaf: TD-Leaf(lambda) on the leaves of
    /// the principal variations; texel: fitting to positions labelled by game results and the
    /// exact solver [default: the preset's, else td-leaf]
    #[arg(long)]
    pub method: Option<String>,
    /// Start from a preset: ahmed (Ahmed's report: ahmed10, TD(0), 8000 games, 30% random
    /// moves, his initial weights)
    #[arg(long)]
    pub preset: Option<String>,
    /// Feature set or features joined by + [default: ahmed10; texel: hunter10]
    #[arg(long)]
    pub features: Option<String>,
    /// Starting weights: a preset of the feature set (published) or numbers joined by commas
    /// [default: the set's first preset, else zeros]
    #[arg(long)]
    pub init: Option<String>,
    /// Learning rate
    #[arg(long)]
    pub alpha: Option<f64>,
    /// Trace decay, 0 to 1
    #[arg(long)]
    pub lambda: Option<f64>,
    /// Chance of a random move in self-play
    #[arg(long)]
    pub epsilon: Option<f64>,
    /// Search depth while learning
    #[arg(long)]
    pub depth: Option<u32>,
    /// Self-play games (texel: the games positions are sampled from)
    #[arg(long)]
    pub games: Option<u32>,
    /// texel: the agent whose self-play games give the positions
    /// [default: heuristic:hunter10:published:4]
    #[arg(long)]
    pub source: Option<String>,
    /// texel: positions sampled from each game
    #[arg(long)]
    pub positions_per_game: Option<u32>,
    /// texel: positions with at most this many seeds in the pits are labelled by the exact
    /// solver (0: never)
    #[arg(long)]
    pub exact_seeds: Option<u32>,
    /// texel: rounds of finding leaves and fitting (each one a checkpoint)
    #[arg(long)]
    pub rounds: Option<u32>,
    /// texel: L-BFGS iterations a round
    #[arg(long)]
    pub max_iters: Option<u64>,
    /// texel: weight of the L2 penalty
    #[arg(long)]
    pub l2: Option<f64>,
    /// Games played with one set of weights before their updates are applied
    #[arg(long)]
    pub batch: Option<u32>,
    /// Random sowings before each self-play game
    #[arg(long)]
    pub opening_plies: Option<u32>,
    /// U = atan(scale * sum W H)
    #[arg(long)]
    pub scale: Option<f64>,
    /// Board size m,n
    #[arg(long)]
    pub board: Option<String>,
    /// Capture rule: standard or empty-capture
    #[arg(long, value_parser = parse_rules)]
    pub rules: Option<Rules>,
    #[arg(long)]
    pub seed: Option<u64>,
    /// Search depth of the exported player, and of the benchmark games
    #[arg(long, default_value_t = 4)]
    pub play_depth: u32,
    /// Benchmark panel, agent specs joined by spaces [default: the starting weights and
    /// minimax, both at --play-depth]
    #[arg(long, num_args = 1..)]
    pub panel: Option<Vec<String>>,
    /// Colour-swapped pairs against each panel agent at each checkpoint
    #[arg(long, default_value_t = 100)]
    pub pairs: u32,
    /// Random sowings of the benchmark's openings (learning uses another RNG stream)
    #[arg(long, default_value_t = 6)]
    pub panel_opening_plies: u32,
    /// Checkpoints: measure against the panel every this many games [default: a sixteenth
    /// of the games]
    #[arg(long)]
    pub every: Option<u32>,
    /// Worker threads (default: all cores); the result does not depend on it
    #[arg(long)]
    pub threads: Option<usize>,
    /// Stop after the step that uses up this many minutes of processor time, all threads
    /// together (20 is ten minutes on two cores); for comparing tuners at equal cost
    #[arg(long)]
    pub cpu_minutes: Option<f64>,
    /// Where to write the export document (JSON)
    #[arg(long)]
    pub out: PathBuf,
}

/// The learning config the flags describe: preset (or the defaults), then each flag.
pub fn build_config(args: &LearnArgs) -> Result<TunerConfig> {
    if args.method.as_deref() == Some("texel") {
        return build_texel(args).map(|c| TunerConfig::Texel(Box::new(c)));
    }
    let mut config = match &args.preset {
        Some(name) => TdConfig::preset(name).map_err(|e| usage(format!("--preset: {e}")))?,
        None => TdConfig::default(),
    };
    if let Some(method) = &args.method {
        config.method = match method.as_str() {
            "td" => TdMethod::Td,
            "td-leaf" => TdMethod::TdLeaf,
            other => {
                return Err(usage(format!(
                    "--method: unknown method {other:?}; methods: td, td-leaf, texel"
                )))
            }
        };
    }
    for (given, flag) in [
        (args.source.is_some(), "--source"),
        (args.positions_per_game.is_some(), "--positions-per-game"),
        (args.exact_seeds.is_some(), "--exact-seeds"),
        (args.rounds.is_some(), "--rounds"),
        (args.max_iters.is_some(), "--max-iters"),
        (args.l2.is_some(), "--l2"),
    ] {
        if given {
            return Err(usage(format!(
                "{flag} is a texel setting: add --method texel"
            )));
        }
    }
    (config.features, config.initial) = terms(args, "ahmed10", &config.features, &config.initial)?;
    (config.pits, config.seeds) = board(args, (config.pits, config.seeds))?;
    macro_rules! set {
        ($($field:ident),*) => {$(
            if let Some(value) = args.$field {
                config.$field = value;
            }
        )*};
    }
    set!(
        alpha,
        lambda,
        epsilon,
        depth,
        games,
        batch,
        opening_plies,
        scale,
        rules,
        seed
    );
    config.validate().map_err(|e| usage(e.to_string()))?;
    Ok(TunerConfig::Td(Box::new(config)))
}

/// `--method texel`: its defaults, then each flag.
fn build_texel(args: &LearnArgs) -> Result<TexelConfig> {
    if args.preset.is_some() {
        return Err(usage("--preset: the presets are TD's; texel has none"));
    }
    for (given, flag) in [
        (args.alpha.is_some(), "--alpha"),
        (args.lambda.is_some(), "--lambda"),
        (args.epsilon.is_some(), "--epsilon"),
        (args.batch.is_some(), "--batch"),
        (args.scale.is_some(), "--scale"),
    ] {
        if given {
            return Err(usage(format!(
                "{flag} is a TD setting: texel does not use it"
            )));
        }
    }
    let mut config = TexelConfig::default();
    (config.features, config.initial) = terms(args, "hunter10", &config.features, &config.initial)?;
    (config.pits, config.seeds) = board(args, (config.pits, config.seeds))?;
    if let Some(text) = &args.source {
        config.source = AgentSpec::parse(text).map_err(|e| usage(format!("--source: {e}")))?;
    }
    macro_rules! set {
        ($($field:ident),*) => {$(
            if let Some(value) = args.$field {
                config.$field = value;
            }
        )*};
    }
    set!(
        games,
        positions_per_game,
        exact_seeds,
        rounds,
        max_iters,
        l2,
        depth,
        opening_plies,
        rules,
        seed
    );
    config.validate().map_err(|e| usage(e.to_string()))?;
    Ok(config)
}

/// `--features` and `--init` over a method's defaults.
fn terms(
    args: &LearnArgs,
    default_set: &str,
    features: &[Feature],
    initial: &[f64],
) -> Result<(Vec<Feature>, Vec<f64>)> {
    let (mut features, mut initial) = (features.to_vec(), initial.to_vec());
    if let Some(text) = &args.features {
        features = parse_features(text).map_err(|e| usage(format!("--features: {e}")))?;
        initial = match feature_set(text) {
            Some(set) => set.presets[0].1.to_vec(),
            None => vec![0.0; features.len()],
        };
    }
    if let Some(text) = &args.init {
        initial = parse_init(text, args.features.as_deref().unwrap_or(default_set))?;
    }
    Ok((features, initial))
}

/// `--board` over a method's default.
fn board(args: &LearnArgs, default: (usize, u32)) -> Result<(usize, u32)> {
    match &args.board {
        Some(text) => parse_board(text).map_err(|e| usage(format!("--board: {e}"))),
        None => Ok(default),
    }
}

/// `--init`: a preset name of the feature set, or numbers joined by commas.
fn parse_init(text: &str, features: &str) -> Result<Vec<f64>> {
    if text.contains(',') || text.parse::<f64>().is_ok() {
        return text
            .split(',')
            .map(|w| {
                w.trim()
                    .parse::<f64>()
                    .map_err(|_| usage(format!("--init: {w:?} is not a number")))
            })
            .collect();
    }
    let set = feature_set(features).ok_or_else(|| {
        usage(format!(
            "--init {text}: presets belong to feature sets, and {features:?} is not one; give numbers"
        ))
    })?;
    set.preset(text)
        .map(|w| w.to_vec())
        .map_err(|e| usage(format!("--init: {e}")))
}

/// A learning run of either kind, stepped by [`run`].
enum Learner {
    Td(Box<TdLearner>),
    Texel(Box<TexelFitter>),
}

impl Learner {
    fn new(config: &TunerConfig) -> Result<Learner> {
        Ok(match config {
            TunerConfig::Td(c) => Learner::Td(Box::new(
                TdLearner::new((**c).clone()).map_err(|e| usage(e.to_string()))?,
            )),
            TunerConfig::Texel(c) => Learner::Texel(Box::new(
                TexelFitter::new((**c).clone()).map_err(|e| usage(e.to_string()))?,
            )),
            TunerConfig::Ga(_) => return Err(usage("a GA run is `evolve`'s")),
        })
    }

    /// One batch of TD games or one round of fitting.
    fn step(&mut self) {
        match self {
            Learner::Td(l) => {
                l.step();
            }
            Learner::Texel(f) => {
                f.step();
            }
        }
    }

    fn weights(&self) -> &[f64] {
        match self {
            Learner::Td(l) => l.weights(),
            Learner::Texel(f) => f.weights(),
        }
    }

    fn is_done(&self) -> bool {
        match self {
            Learner::Td(l) => l.is_done(),
            Learner::Texel(f) => f.is_done(),
        }
    }

    /// Games learnt from (TD) or rounds fitted (Texel): what the progress bar counts.
    fn position(&self) -> u64 {
        match self {
            Learner::Td(l) => l.progress().games,
            Learner::Texel(f) => f.progress().rounds as u64,
        }
    }

    fn length(&self) -> u64 {
        match self {
            Learner::Td(l) => l.config().games as u64,
            Learner::Texel(f) => f.config().rounds as u64,
        }
    }

    /// Whether a checkpoint is due after the step that reached `position`.
    fn checkpoint_due(&self, position: u64, next: u64) -> bool {
        match self {
            Learner::Td(_) => position >= next || self.is_done(),
            Learner::Texel(_) => true,
        }
    }

    fn summary(&self) -> String {
        match self {
            Learner::Td(l) => {
                let p = l.progress();
                format!("{} games ({} plies)", p.games, p.plies)
            }
            Learner::Texel(f) => {
                let p = f.progress();
                format!(
                    "{} rounds on {} positions ({} labelled exactly, {} with decided leaves), loss {:.4} -> {:.4} in the last round",
                    p.rounds, p.positions, p.exact_labels, p.decided_leaves, p.loss_before, p.loss_after
                )
            }
        }
    }
}

/// What `learn` prints before it starts.
fn describe(config: &TunerConfig) -> String {
    match config {
        TunerConfig::Td(c) => format!(
            "learning {} weights by {} (alpha {}, lambda {}, epsilon {}, depth {}) over {} self-play games, seed {}",
            c.features.len(),
            c.method.name(),
            c.alpha,
            c.lambda,
            c.epsilon,
            c.depth,
            c.games,
            c.seed
        ),
        TunerConfig::Texel(c) => format!(
            "fitting {} weights by texel ({} rounds, depth {}, l2 {}) to {} positions from {} games of {}, exact labels up to {} seeds, seed {}",
            c.features.len(),
            c.rounds,
            c.depth,
            c.l2,
            c.games as u64 * c.positions_per_game as u64,
            c.games,
            c.source,
            c.exact_seeds,
            c.seed
        ),
        TunerConfig::Ga(_) => String::new(),
    }
}

/// What the benchmark needs of a learning config.
struct Setting {
    features: Vec<Feature>,
    initial: Vec<f64>,
    rules: Rules,
    start: Position,
    seed: u64,
}

/// The features, starting weights, rules, start position and seed of a learning config.
fn setting(config: &TunerConfig) -> Result<Setting> {
    match config {
        TunerConfig::Td(c) => Ok(Setting {
            start: c.validate().map_err(|e| usage(e.to_string()))?,
            features: c.features.clone(),
            initial: c.initial.clone(),
            rules: c.rules,
            seed: c.seed,
        }),
        TunerConfig::Texel(c) => Ok(Setting {
            start: c.validate().map_err(|e| usage(e.to_string()))?,
            features: c.features.clone(),
            initial: c.initial.clone(),
            rules: c.rules,
            seed: c.seed,
        }),
        TunerConfig::Ga(_) => Err(usage("a GA run is `evolve`'s")),
    }
}

/// The benchmark: `--panel`, or the starting weights and minimax at `--play-depth`.
fn benchmark(args: &LearnArgs, config: &TunerConfig) -> Result<Benchmark> {
    let Setting {
        features,
        initial,
        rules,
        start,
        seed,
    } = setting(config)?;
    let panel = match &args.panel {
        Some(specs) => specs
            .iter()
            .map(|s| AgentSpec::parse(s).map_err(|e| usage(format!("--panel: {e}"))))
            .collect::<Result<Vec<_>>>()?,
        None => vec![
            AgentSpec::Heuristic {
                features: FeatureChoice::List(features.clone()),
                weights: WeightChoice::Values(initial),
                depth: Depth::Fixed(args.play_depth),
                time_ms: None,
                ties: Ties::Random,
            },
            AgentSpec::Minimax {
                depth: Depth::Fixed(args.play_depth),
                time_ms: None,
                ties: Ties::Random,
            },
        ],
    };
    if panel.is_empty() || args.pairs == 0 {
        return Err(usage(
            "--panel and --pairs: the benchmark needs agents and pairs",
        ));
    }
    let bench = BenchmarkConfig {
        panel,
        pairs: args.pairs,
        every: 1,
        leaders: 1,
        opening_plies: args.panel_opening_plies,
    };
    Ok(Benchmark::new(
        &bench,
        &features,
        args.play_depth,
        rules,
        start,
        seed,
    )?)
}

/// The best measured weights so far, and where learning was when they were measured.
struct Champion {
    result: PanelResult,
    position: u64,
    checkpoint: u32,
}

pub fn run(args: &LearnArgs) -> Result<()> {
    let config = build_config(args)?;
    let budget = CpuBudget::new(args.cpu_minutes)?;
    let max_depth = crate::agents::Profile::Library.limits().max_depth;
    if args.play_depth == 0 || args.play_depth > max_depth {
        return Err(usage(format!(
            "--play-depth must be 1 to {max_depth}, got {}",
            args.play_depth
        )));
    }
    let every = match (&config, args.every) {
        (TunerConfig::Td(c), None) => (c.games / 16).max(1),
        (TunerConfig::Td(_), Some(0)) => return Err(usage("--every must be at least 1")),
        (TunerConfig::Td(_), Some(n)) => n,
        (_, Some(_)) => return Err(usage("--every is for TD: texel measures after every round")),
        (_, None) => 1,
    };
    let bench = benchmark(args, &config)?;
    let pool = thread_pool(args.threads)?;
    eprintln!(
        "{}; panel of {} at depth {}{}",
        describe(&config),
        bench.config().panel.len(),
        args.play_depth,
        match config {
            TunerConfig::Td(_) => format!(" every {every} games"),
            _ => " after every round".to_string(),
        }
    );
    let started = Instant::now();
    let mut learner = pool.install(|| Learner::new(&config))?;
    let stop = stop_flag("interrupted: stopping after this step (Ctrl-C again to stop now)");
    let measure = |weights: &[f64]| -> PanelResult {
        pool.install(|| bench.measure(&[(0, weights.to_vec())]))
            .remove(0)
    };
    let first = measure(learner.weights());
    println!("{}", checkpoint_line(&learner, &first, true));
    let mut champion = Champion {
        result: first,
        position: 0,
        checkpoint: 0,
    };
    write_export(args, &config, &champion)?;
    let bar = progress_bar(
        learner.length(),
        "{spinner} {pos}/{len} [{wide_bar}] {msg} ETA {eta}",
    );
    let mut checkpoint = 0;
    let mut next_check = every as u64;
    while !learner.is_done() && !stop.load(Ordering::SeqCst) && !budget.spent() {
        pool.install(|| learner.step());
        let position = learner.position();
        if let Some(bar) = &bar {
            bar.set_position(position);
        }
        // The step that spends the budget ends the run: measure it, as at the end of learning.
        if learner.checkpoint_due(position, next_check) || budget.spent() {
            next_check = position + every as u64;
            checkpoint += 1;
            let result = measure(learner.weights());
            let better = beats(&result, &champion.result);
            let line = checkpoint_line(&learner, &result, better);
            match &bar {
                Some(bar) => bar.println(line),
                None => println!("{line}"),
            }
            if better {
                champion = Champion {
                    result,
                    position,
                    checkpoint,
                };
                write_export(args, &config, &champion)?;
            }
        }
    }
    if let Some(bar) = &bar {
        bar.finish();
    }
    let doc = write_export(args, &config, &champion)?;
    eprintln!(
        "learnt weights {}",
        serde_json::to_string(learner.weights())?
    );
    eprintln!(
        "{} in {:.1} s, {}{}; champion from checkpoint {} (at {}), panel {}; wrote {}",
        learner.summary(),
        started.elapsed().as_secs_f64(),
        budget.describe_use(),
        if learner.is_done() {
            ""
        } else if budget.spent() {
            " (processor-time budget)"
        } else {
            " (interrupted)"
        },
        champion.checkpoint,
        champion.position,
        champion.result.overall.display_percent(),
        args.out.display()
    );
    println!("{}", serde_json::to_string(&doc.agent)?);
    Ok(())
}

fn checkpoint_line(learner: &Learner, result: &PanelResult, champion: bool) -> String {
    let s = &result.overall;
    let at = match learner {
        Learner::Td(_) => format!("games {:>8}", learner.position()),
        Learner::Texel(f) if f.progress().rounds == 0 => "round   0  (starting weights)".into(),
        Learner::Texel(f) => {
            let p = f.progress();
            format!(
                "round {:>3}  loss {:.4} -> {:.4}",
                p.rounds, p.loss_before, p.loss_after
            )
        }
    };
    format!(
        "{at}  panel {} Elo {:+.0} [{:+.0}, {:+.0}]{}",
        s.display_percent(),
        s.elo,
        s.elo_low,
        s.elo_high,
        if champion { " (champion)" } else { "" }
    )
}

fn write_export(
    args: &LearnArgs,
    config: &TunerConfig,
    champion: &Champion,
) -> Result<ExportDocument> {
    let doc = ExportDocument::from_learner(
        config.clone(),
        &champion.result.weights,
        args.play_depth,
        champion.result.overall.score,
        champion.checkpoint,
    )?;
    write_atomically(&args.out, doc.to_json_pretty().as_bytes())?;
    Ok(doc)
}
