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
use serde_json::{json, Map, Value};

use super::args::{config_layer, parse_rules, thread_pool, usage};
use super::console::{stop_flag, CpuBudget};
use super::progress::RunConsole;
use crate::agents::FileAccess;
use crate::eval::{feature_set, parse_features};
use crate::game::{parse_board, Rules};
use crate::rl::td::{TdConfig, TdMethod};
use crate::rl::LearnerProgress;
use crate::search::Budget;
use crate::tune::GenerationRecord;
use crate::tune::{Driver, Ended, ExportFile, StepControl, TunerConfig};
use crate::tuners::learning::progress_of;
use crate::tuners::{LearnerConfig, LearningConfig};

#[derive(Args, Debug)]
pub(crate) struct LearnArgs {
    /// Config file (.toml or .json): a learning config (the learner's fields, `play_depth`,
    /// `checkpoint_games`, `benchmark`), as the API's `config`; flags are applied over it
    #[arg(long)]
    pub config: Option<PathBuf>,
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
    /// Search depth of the exported player, and of its benchmark games [default: 4]
    #[arg(long)]
    pub play_depth: Option<u32>,
    /// Benchmark panel, agent specs joined by spaces [default: the GA's panel, as for every
    /// run: minimax:4 and the published hunter10, divilly6 and abrams3 players at depth 4]
    #[arg(long, num_args = 1..)]
    pub panel: Option<Vec<String>>,
    /// Colour-swapped pairs against each panel agent at each checkpoint [default: 8]
    #[arg(long)]
    pub pairs: Option<u32>,
    /// Also measure perfect-move agreement at each checkpoint, on this many positions from
    /// real games solved exactly (docs/reference/agents.md#perfect-play-as-a-yardstick)
    #[arg(long, value_name = "POSITIONS")]
    pub agreement: Option<u32>,
    /// Random sowings of the benchmark's openings (learning uses another RNG stream)
    /// [default: 4]
    #[arg(long)]
    pub panel_opening_plies: Option<u32>,
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

/// The tuner the flags and the config file name: `--method`, else the file's `method`, else
/// the preset's, else td-leaf.
fn tuner_name(args: &LearnArgs, file: Option<&Value>) -> Result<String> {
    if let Some(method) = &args.method {
        return Ok(method.clone());
    }
    if let Some(method) = file.and_then(|f| f.get("method")).and_then(Value::as_str) {
        return Ok(method.to_string());
    }
    match &args.preset {
        Some(name) => Ok(TdConfig::preset(name)
            .map_err(|e| usage(format!("--preset: {e}")))?
            .method
            .name()
            .to_string()),
        None => Ok(TdMethod::TdLeaf.name().to_string()),
    }
}

/// Refuses flags of the other kind of learner, by name, before the loader would call them
/// unknown fields.
fn check_flags(args: &LearnArgs, texel: bool) -> Result<()> {
    let (flags, why): (Vec<(bool, &str)>, &str) = if texel {
        (
            vec![
                (args.alpha.is_some(), "--alpha"),
                (args.lambda.is_some(), "--lambda"),
                (args.epsilon.is_some(), "--epsilon"),
                (args.batch.is_some(), "--batch"),
                (args.scale.is_some(), "--scale"),
                (args.every.is_some(), "--every"),
            ],
            "is a TD setting: texel does not use it (it measures after every round)",
        )
    } else {
        (
            vec![
                (args.source.is_some(), "--source"),
                (args.positions_per_game.is_some(), "--positions-per-game"),
                (args.exact_seeds.is_some(), "--exact-seeds"),
                (args.rounds.is_some(), "--rounds"),
                (args.max_iters.is_some(), "--max-iters"),
                (args.l2.is_some(), "--l2"),
            ],
            "is a texel setting: add --method texel",
        )
    };
    match flags.into_iter().find(|(given, _)| *given) {
        Some((_, flag)) => Err(usage(format!("{flag} {why}"))),
        None => Ok(()),
    }
}

/// The flags as one partial learning config, laid over the file's.
fn flag_layer(args: &LearnArgs, texel: bool) -> Result<Value> {
    let mut layer = Map::new();
    let mut put = |key: &str, value: Value| {
        layer.insert(key.to_string(), value);
    };
    let default_set = if texel { "hunter10" } else { "ahmed10" };
    if let Some(text) = &args.features {
        let features = parse_features(text).map_err(|e| usage(format!("--features: {e}")))?;
        let initial = match feature_set(text) {
            Some(set) => set.presets[0].1.to_vec(),
            None => vec![0.0; features.len()],
        };
        put("features", json!(features));
        put("initial", json!(initial));
    }
    if let Some(text) = &args.init {
        let initial = parse_init(text, args.features.as_deref().unwrap_or(default_set))?;
        put("initial", json!(initial));
    }
    if let Some(text) = &args.board {
        let (pits, seeds) = parse_board(text).map_err(|e| usage(format!("--board: {e}")))?;
        put("pits", json!(pits));
        put("seeds", json!(seeds));
    }
    if let Some(text) = &args.source {
        put("source", json!(text));
    }
    macro_rules! set {
        ($($field:ident),*) => {$(
            if let Some(value) = &args.$field {
                put(stringify!($field), json!(value));
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
        seed,
        positions_per_game,
        exact_seeds,
        rounds,
        max_iters,
        l2,
        play_depth
    );
    if args.pie {
        put("pie", json!(true));
    }
    if let Some(every) = args.every {
        put("checkpoint_games", json!(every));
    }
    let mut benchmark = Map::new();
    if let Some(specs) = &args.panel {
        benchmark.insert("panel".into(), json!(specs));
    }
    for (key, value) in [
        ("pairs", args.pairs),
        ("opening_plies", args.panel_opening_plies),
        ("agreement", args.agreement),
    ] {
        if let Some(v) = value {
            benchmark.insert(key.into(), json!(v));
        }
    }
    if !benchmark.is_empty() {
        put("benchmark", Value::Object(benchmark));
    }
    Ok(Value::Object(layer))
}

/// The flag that sets a learning config's field, for error messages.
fn flag_of(field: &str) -> String {
    match field {
        "play_depth" => "--play-depth".into(),
        "checkpoint_games" => "--every".into(),
        "benchmark.pairs" => "--pairs".into(),
        "benchmark.agreement" => "--agreement".into(),
        "benchmark.opening_plies" => "--panel-opening-plies".into(),
        "initial" => "--init (initial)".into(),
        "pits" | "seeds" => "--board".into(),
        "tuner" => "--method".into(),
        f if f.starts_with("benchmark.panel") => "--panel".into(),
        f => format!("--{}", f.replace('_', "-")),
    }
}

/// The learning run the config file and flags describe: the tuner's defaults (the same as the
/// API's), the file, then the flags, through the one config loader.
pub(crate) fn build_config(args: &LearnArgs) -> Result<LearningConfig> {
    let file = config_layer(args.config.as_deref())?;
    let tuner = tuner_name(args, file.as_ref())?;
    // Fitting takes flags of its own (and not TD's).
    let texel = matches!(
        LearnerConfig::for_tuner(&tuner, None),
        Ok(LearnerConfig::Texel(_))
    );
    check_flags(args, texel)?;
    let flags = flag_layer(args, texel)?;
    let layers: Vec<&Value> = file.iter().chain([&flags]).collect();
    crate::tuners::learning::load_learning(
        &tuner,
        args.preset.as_deref(),
        &layers,
        &FileAccess::Any,
    )
    .map_err(|e| {
        if args.config.is_some() {
            // The field may come from the file: name the field, not a flag.
            return usage(e.to_string());
        }
        let reason = e.to_string();
        let reason = reason.split_once(": ").map_or(reason.as_str(), |(_, r)| r);
        usage(format!("{}: {reason}", flag_of(e.field())))
    })
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

pub(crate) fn run(args: &LearnArgs) -> Result<()> {
    let config = build_config(args)?;
    let budget = CpuBudget::new(args.cpu_minutes)?;
    let pool = thread_pool(args.threads)?;
    eprintln!("{}", describe(&config));
    let started = Instant::now();
    let mut driver = pool
        .install(|| Driver::open(TunerConfig::new(config.clone()), None))
        .map_err(|e| usage(e.to_string()))?;
    let stop = stop_flag("interrupted: stopping after this step (Ctrl-C again to stop now)");
    let unit = match config.learner {
        LearnerConfig::Td(_) => "games",
        LearnerConfig::Texel(_) => "round",
    };
    let mut console = RunConsole::new(driver.length(), unit);
    let bar = console.bar();
    // The step that spends the budget ends the run: it is measured, as at the end.
    let control = StepControl::new(Budget::unlimited()).with_go_on(move |position| {
        if let Some(bar) = &bar {
            bar.set_position(position);
        }
        !stop.load(Ordering::SeqCst) && !budget.spent()
    });
    let mut export = ExportFile::new(&args.out);
    let ended = pool.install(|| driver.run(&control, &mut [&mut console, &mut export]))?;
    console.finish();
    let (Some(last), Some(doc)) = (driver.last(), export.document()) else {
        anyhow::bail!("the run made no checkpoint");
    };
    let weights = last.individuals.first().map_or(&[][..], |i| &i.weights[..]);
    eprintln!("learnt weights {}", serde_json::to_string(weights)?);
    eprintln!(
        "{} in {:.1} s, {}{}; champion from checkpoint {} (at {}), panel {}; wrote {}",
        progress_of(last).as_ref().map_or(String::new(), summary),
        started.elapsed().as_secs_f64(),
        budget.describe_use(),
        match ended {
            Ended::Finished(_) => "",
            Ended::Stopped if budget.spent() => " (processor-time budget)",
            Ended::Stopped => " (interrupted)",
        },
        doc.generation,
        champion_position(last, &console.positions),
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
    match progress_of(last) {
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
