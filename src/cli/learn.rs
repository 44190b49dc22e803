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
use crate::ga::{
    BenchmarkConfig, ExportDocument, GenerationRecord, LearnerConfig, LearnerProgress,
    LearningConfig, LearningRun,
};
use crate::game::{parse_board, Rules};
use crate::rl::td::{TdConfig, TdMethod};
use crate::rl::texel::TexelConfig;
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
    /// Play every game under the pie rule (South's opening earns no extra turn, North may
    /// swap): for players meant for the ManKalah engine
    #[arg(long)]
    pub pie: bool,
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
    /// Also measure perfect-move agreement at each checkpoint, on this many positions from
    /// real games solved exactly (docs/agents.md#perfect-play-as-a-yardstick)
    #[arg(long, value_name = "POSITIONS")]
    pub agreement: Option<u32>,
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

/// The learner's config the flags describe: preset (or the defaults), then each flag.
pub fn build_learner(args: &LearnArgs) -> Result<LearnerConfig> {
    if args.method.as_deref() == Some("texel") {
        return build_texel(args).map(LearnerConfig::Texel);
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
    config.pie |= args.pie;
    config.validate().map_err(|e| usage(e.to_string()))?;
    Ok(LearnerConfig::Td(config))
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
    config.pie |= args.pie;
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

/// What `learn` prints before it starts.
fn describe(config: &LearningConfig) -> String {
    let learner = match &config.learner {
        LearnerConfig::Td(c) => format!(
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
        LearnerConfig::Texel(c) => format!(
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
    };
    let when = match &config.learner {
        LearnerConfig::Td(_) => format!("every {} games", config.checkpoint_every()),
        LearnerConfig::Texel(_) => "after every round".to_string(),
    };
    format!(
        "{learner}; panel of {} at depth {} {when}",
        config.benchmark.panel.len(),
        config.play_depth
    )
}

/// The learning run the flags describe: the learner, and its benchmark (`--panel`, or the
/// starting weights and minimax at `--play-depth`).
pub fn build_config(args: &LearnArgs) -> Result<LearningConfig> {
    let learner = build_learner(args)?;
    let panel = match &args.panel {
        Some(specs) => specs
            .iter()
            .map(|s| AgentSpec::parse(s).map_err(|e| usage(format!("--panel: {e}"))))
            .collect::<Result<Vec<_>>>()?,
        None => vec![
            AgentSpec::Heuristic {
                features: FeatureChoice::List(learner.features().to_vec()),
                weights: WeightChoice::Values(learner.initial().to_vec()),
                depth: Depth::Fixed(args.play_depth),
                time_ms: None,
                nodes: None,
                ties: Ties::Random,
                egdb: false,
            },
            AgentSpec::Minimax {
                depth: Depth::Fixed(args.play_depth),
                time_ms: None,
                nodes: None,
                ties: Ties::Random,
                egdb: false,
            },
        ],
    };
    if matches!(learner, LearnerConfig::Texel(_)) && args.every.is_some() {
        return Err(usage("--every is for TD: texel measures after every round"));
    }
    let config = LearningConfig {
        learner,
        play_depth: args.play_depth,
        checkpoint_games: args.every,
        benchmark: BenchmarkConfig {
            panel,
            pairs: args.pairs,
            every: 1,
            leaders: 1,
            opening_plies: args.panel_opening_plies,
            agreement: args.agreement,
        },
    };
    config.validate().map_err(|e| {
        // Name the run's settings by their flags.
        let flag = match e.field() {
            "play_depth" => "--play-depth".to_string(),
            "checkpoint_games" => "--every".to_string(),
            "benchmark.pairs" => "--pairs".to_string(),
            "benchmark.agreement" => "--agreement".to_string(),
            "benchmark.opening_plies" => "--panel-opening-plies".to_string(),
            f if f.starts_with("benchmark.panel") => "--panel".to_string(),
            _ => return usage(e.to_string()),
        };
        let reason = e.to_string();
        let reason = reason.split_once(": ").map_or(reason.as_str(), |(_, r)| r);
        usage(format!("{flag}: {reason}"))
    })?;
    Ok(config)
}

pub fn run(args: &LearnArgs) -> Result<()> {
    let config = build_config(args)?;
    let budget = CpuBudget::new(args.cpu_minutes)?;
    let pool = thread_pool(args.threads)?;
    eprintln!("{}", describe(&config));
    let started = Instant::now();
    let mut run = pool
        .install(|| LearningRun::new(config.clone()))
        .map_err(|e| usage(e.to_string()))?;
    let stop = stop_flag("interrupted: stopping after this step (Ctrl-C again to stop now)");
    let bar = progress_bar(
        run.length(),
        "{spinner} {pos}/{len} [{wide_bar}] {msg} ETA {eta}",
    );
    let mut last = None;
    let mut positions = Vec::new();
    loop {
        let go_on = |position: u64| {
            if let Some(bar) = &bar {
                bar.set_position(position);
            }
            !stop.load(Ordering::SeqCst) && !budget.spent()
        };
        // The step that spends the budget ends the run: it is measured, as at the end.
        let Some(record) = pool.install(|| run.step_while(go_on)) else {
            break;
        };
        let position = record.learner.as_ref().map_or(0, |p| p.position());
        positions.push(position);
        if let Some(bar) = &bar {
            bar.set_position(position);
        }
        let line = checkpoint_line(&record);
        match &bar {
            Some(bar) => bar.println(line),
            None => println!("{line}"),
        }
        if record.benchmark.as_ref().is_some_and(|b| b.new_champion) {
            write_export(args, &config, &record)?;
        }
        let ended = record.stop.is_some() || stop.load(Ordering::SeqCst) || budget.spent();
        last = Some(record);
        if ended {
            break;
        }
    }
    if let Some(bar) = &bar {
        bar.finish();
    }
    let last = last.ok_or_else(|| anyhow::anyhow!("the run made no checkpoint"))?;
    let doc = write_export(args, &config, &last)?;
    eprintln!("learnt weights {}", serde_json::to_string(run.weights())?);
    eprintln!(
        "{} in {:.1} s, {}{}; champion from checkpoint {} (at {}), panel {}; wrote {}",
        summary(&run.progress()),
        started.elapsed().as_secs_f64(),
        budget.describe_use(),
        if run.is_finished() {
            ""
        } else if budget.spent() {
            " (processor-time budget)"
        } else {
            " (interrupted)"
        },
        doc.generation,
        champion_position(&last, &positions),
        last.champion
            .as_ref()
            .map_or(String::new(), |c| c.panel.overall.display_percent()),
        args.out.display()
    );
    println!("{}", serde_json::to_string(&doc.agent)?);
    Ok(())
}

/// Where learning was when the champion was measured, from each checkpoint's games or rounds.
fn champion_position(last: &GenerationRecord, positions: &[u64]) -> String {
    let Some(champion) = &last.champion else {
        return String::new();
    };
    let at = positions
        .get(champion.generation as usize)
        .copied()
        .unwrap_or(0);
    match &last.learner {
        Some(LearnerProgress::Texel(_)) => format!("round {at}"),
        _ => format!("game {at}"),
    }
}

fn summary(progress: &LearnerProgress) -> String {
    match progress {
        LearnerProgress::Td(p) => format!("{} games ({} plies)", p.games, p.plies),
        LearnerProgress::Texel(p) => format!(
            "{} rounds on {} positions ({} labelled exactly, {} with decided leaves), loss {:.4} -> {:.4} in the last round",
            p.rounds, p.positions, p.exact_labels, p.decided_leaves, p.loss_before, p.loss_after
        ),
    }
}

fn checkpoint_line(record: &GenerationRecord) -> String {
    let at = match &record.learner {
        Some(LearnerProgress::Td(p)) => format!("games {:>8}", p.games),
        Some(LearnerProgress::Texel(p)) if p.rounds == 0 => "round   0  (starting weights)".into(),
        Some(LearnerProgress::Texel(p)) => format!(
            "round {:>3}  loss {:.4} -> {:.4}",
            p.rounds, p.loss_before, p.loss_after
        ),
        None => format!("checkpoint {}", record.generation),
    };
    let new_champion = record.benchmark.as_ref().is_some_and(|b| b.new_champion);
    let s = record
        .benchmark
        .as_ref()
        .and_then(|b| b.leaders.first())
        .map(|r| r.overall);
    match s {
        Some(s) => format!(
            "{at}  panel {} Elo {:+.0} [{:+.0}, {:+.0}]{}",
            s.display_percent(),
            s.elo,
            s.elo_low,
            s.elo_high,
            if new_champion { " (champion)" } else { "" }
        ),
        None => at,
    }
}

fn write_export(
    args: &LearnArgs,
    config: &LearningConfig,
    last: &GenerationRecord,
) -> Result<ExportDocument> {
    let doc = config.export(last)?;
    write_atomically(&args.out, doc.to_json_pretty().as_bytes())?;
    Ok(doc)
}
