//! `kalah-tuner learn`: tunes weights by temporal-difference learning from self-play
//! (`--method td|td-leaf`, [`crate::rl::td`]) and writes the same export document as
//! `evolve`. The weights are measured against a benchmark panel at checkpoints, on openings
//! learning never sees; the exported player is the champion of those measurements, chosen as
//! a GA run's is (a later checkpoint replaces it only when it wins a paired test), so Ctrl-C
//! keeps the best measured so far.

use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::time::Instant;

use anyhow::Result;
use clap::Args;

use super::console::{progress_bar, stop_flag, write_atomically};
use super::{parse_rules, thread_pool, usage};
use crate::agents::spec::{FeatureChoice, WeightChoice};
use crate::agents::{AgentSpec, Ties};
use crate::eval::{feature_set, parse_features};
use crate::ga::benchmark::{beats, Benchmark, PanelResult};
use crate::ga::{BenchmarkConfig, ExportDocument};
use crate::game::{parse_board, Rules};
use crate::rl::td::{TdConfig, TdLearner, TdMethod};

#[derive(Args, Debug)]
pub struct LearnArgs {
    /// td: TD(lambda) on the positions moved from; td-leaf: TD-Leaf(lambda) on the leaves of
    /// the principal variations [default: the preset's, else td-leaf]
    #[arg(long)]
    pub method: Option<String>,
    /// Start from a preset: ahmed (Ahmed's report: ahmed10, TD(0), 8000 games, 30% random
    /// moves, his initial weights)
    #[arg(long)]
    pub preset: Option<String>,
    /// Feature set or features joined by + [default: ahmed10]
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
    /// Self-play games
    #[arg(long)]
    pub games: Option<u32>,
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
    /// Where to write the export document (JSON)
    #[arg(long)]
    pub out: PathBuf,
}

/// The learning config the flags describe: preset (or the defaults), then each flag.
pub fn build_config(args: &LearnArgs) -> Result<TdConfig> {
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
                    "--method: unknown method {other:?}; methods: td, td-leaf"
                )))
            }
        };
    }
    if let Some(text) = &args.features {
        config.features = parse_features(text).map_err(|e| usage(format!("--features: {e}")))?;
        config.initial = match feature_set(text) {
            Some(set) => set.presets[0].1.to_vec(),
            None => vec![0.0; config.features.len()],
        };
    }
    if let Some(text) = &args.init {
        config.initial = parse_init(text, args.features.as_deref().unwrap_or("ahmed10"))?;
    }
    if let Some(text) = &args.board {
        let (pits, seeds) = parse_board(text).map_err(|e| usage(format!("--board: {e}")))?;
        config.pits = pits;
        config.seeds = seeds;
    }
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
    Ok(config)
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

/// The benchmark: `--panel`, or the starting weights and minimax at `--play-depth`.
fn benchmark(args: &LearnArgs, config: &TdConfig) -> Result<Benchmark> {
    let panel = match &args.panel {
        Some(specs) => specs
            .iter()
            .map(|s| AgentSpec::parse(s).map_err(|e| usage(format!("--panel: {e}"))))
            .collect::<Result<Vec<_>>>()?,
        None => vec![
            AgentSpec::Heuristic {
                features: FeatureChoice::List(config.features.clone()),
                weights: WeightChoice::Values(config.initial.clone()),
                depth: args.play_depth,
                time_ms: None,
                ties: Ties::Random,
            },
            AgentSpec::Minimax {
                depth: args.play_depth,
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
    let start = config.validate().map_err(|e| usage(e.to_string()))?;
    Ok(Benchmark::new(
        &bench,
        &config.features,
        args.play_depth,
        config.rules,
        start,
        config.seed,
    )?)
}

/// The best measured weights so far, and the games learnt when they were measured.
struct Champion {
    result: PanelResult,
    games: u64,
    checkpoint: u32,
}

pub fn run(args: &LearnArgs) -> Result<()> {
    let config = build_config(args)?;
    if args.play_depth == 0 || args.play_depth > crate::agents::Profile::Library.limits().max_depth
    {
        return Err(usage(format!(
            "--play-depth must be 1 to {}, got {}",
            crate::agents::Profile::Library.limits().max_depth,
            args.play_depth
        )));
    }
    let every = args.every.unwrap_or((config.games / 16).max(1));
    if every == 0 {
        return Err(usage("--every must be at least 1"));
    }
    let bench = benchmark(args, &config)?;
    let pool = thread_pool(args.threads)?;
    let mut learner = TdLearner::new(config.clone()).map_err(|e| usage(e.to_string()))?;
    let stop = stop_flag("interrupted: stopping after this batch (Ctrl-C again to stop now)");
    eprintln!(
        "learning {} weights by {} (alpha {}, lambda {}, epsilon {}, depth {}) over {} self-play games, seed {}; panel of {} at depth {} every {} games",
        config.features.len(),
        config.method.name(),
        config.alpha,
        config.lambda,
        config.epsilon,
        config.depth,
        config.games,
        config.seed,
        bench.config().panel.len(),
        args.play_depth,
        every
    );
    let started = Instant::now();
    let measure = |weights: &[f64]| -> PanelResult {
        pool.install(|| bench.measure(&[(0, weights.to_vec())]))
            .remove(0)
    };
    let first = measure(learner.weights());
    println!("{}", checkpoint_line(0, &first, true));
    let mut champion = Champion {
        result: first,
        games: 0,
        checkpoint: 0,
    };
    write_export(args, &config, &champion)?;
    let bar = progress_bar(
        config.games as u64,
        "{spinner} games {pos}/{len} [{wide_bar}] {msg} ETA {eta}",
    );
    let mut checkpoint = 0;
    let mut next_check = every as u64;
    while !learner.is_done() && !stop.load(Ordering::SeqCst) {
        pool.install(|| learner.step());
        let games = learner.progress().games;
        if let Some(bar) = &bar {
            bar.set_position(games);
        }
        if games >= next_check || learner.is_done() {
            next_check = games + every as u64;
            checkpoint += 1;
            let result = measure(learner.weights());
            let better = beats(&result, &champion.result);
            let line = checkpoint_line(games, &result, better);
            match &bar {
                Some(bar) => bar.println(line),
                None => println!("{line}"),
            }
            if better {
                champion = Champion {
                    result,
                    games,
                    checkpoint,
                };
                write_export(args, &config, &champion)?;
            }
        }
    }
    if let Some(bar) = &bar {
        bar.finish();
    }
    let progress = learner.progress();
    let doc = write_export(args, &config, &champion)?;
    eprintln!(
        "learnt weights {}",
        serde_json::to_string(learner.weights())?
    );
    eprintln!(
        "{} games ({} plies) in {:.1} s{}; champion from game {} (checkpoint {}), panel {}; wrote {}",
        progress.games,
        progress.plies,
        started.elapsed().as_secs_f64(),
        if learner.is_done() { "" } else { " (interrupted)" },
        champion.games,
        champion.checkpoint,
        champion.result.overall.display_percent(),
        args.out.display()
    );
    println!("{}", serde_json::to_string(&doc.agent)?);
    Ok(())
}

fn checkpoint_line(games: u64, result: &PanelResult, champion: bool) -> String {
    let s = &result.overall;
    format!(
        "games {games:>8}  panel {} Elo {:+.0} [{:+.0}, {:+.0}]{}",
        s.display_percent(),
        s.elo,
        s.elo_low,
        s.elo_high,
        if champion { " (champion)" } else { "" }
    )
}

fn write_export(
    args: &LearnArgs,
    config: &TdConfig,
    champion: &Champion,
) -> Result<ExportDocument> {
    let doc = ExportDocument::from_learner(
        config,
        &champion.result.weights,
        args.play_depth,
        champion.result.overall.score,
        champion.checkpoint,
    )?;
    write_atomically(&args.out, doc.to_json_pretty().as_bytes())?;
    Ok(doc)
}
