//! `kalah-tuner train-a3c`: flags, progress, Ctrl-C and saving for the A3C trainer in
//! [`crate::rl::a3c`].

use std::path::Path;
use std::time::Duration;

use anyhow::{anyhow, bail, Result};
use clap::Args;

use super::args::{usage, RulesArg};
use super::console::{progress_bar, stop_flag};
use crate::agents::a3c::Net;
use crate::game::parse_board;
use crate::rl::a3c::{
    parse_opponents, train, A3cConfig, Evaluation, Progress, DEFAULT_BETA, DEFAULT_EVAL_GAMES,
    DEFAULT_EVAL_SECONDS, DEFAULT_GAMMA, DEFAULT_HIDDEN, DEFAULT_LEARNING_RATE, DEFAULT_N_STEPS,
    DEFAULT_OPPONENTS, DEFAULT_SHAPING,
};
use crate::tune::write_atomically;

/// `kalah-tuner train-a3c`.
#[derive(Args, Debug, Clone)]
pub(crate) struct TrainArgs {
    /// Worker threads playing and updating asynchronously
    #[arg(long, default_value_t = 2)]
    pub workers: usize,
    /// Train for this many minutes
    #[arg(long)]
    pub minutes: Option<f64>,
    /// Train for this many games in all (with --minutes, whichever comes first)
    #[arg(long)]
    pub episodes: Option<u64>,
    /// Board m,n: pits per side, seeds per pit
    #[arg(long, default_value = "6,4")]
    pub board: String,
    #[command(flatten)]
    pub rules: RulesArg,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Where to write the model (safetensors); the best network by evaluation
    #[arg(long)]
    pub out: String,
    /// Opponents and weights, e.g. self=1,random=1,greedy=6,minimax:1=3,minimax:2=1
    #[arg(long, default_value = DEFAULT_OPPONENTS)]
    pub opponents: String,
    /// Adam learning rate at the start (falls linearly to a tenth)
    #[arg(long, default_value_t = DEFAULT_LEARNING_RATE)]
    pub lr: f64,
    /// Own moves between updates (n-step returns)
    #[arg(long, default_value_t = DEFAULT_N_STEPS)]
    pub n_steps: usize,
    /// Entropy bonus weight
    #[arg(long, default_value_t = DEFAULT_BETA)]
    pub beta: f64,
    /// Discount factor
    #[arg(long, default_value_t = DEFAULT_GAMMA)]
    pub gamma: f64,
    /// Potential-based reward shaping by store difference (0 for win/loss rewards only)
    #[arg(long, default_value_t = DEFAULT_SHAPING)]
    pub shaping: f64,
    /// Units in each of the two hidden layers
    #[arg(long, default_value_t = DEFAULT_HIDDEN)]
    pub hidden: usize,
    /// Games against random and against greedy at each evaluation
    #[arg(long, default_value_t = DEFAULT_EVAL_GAMES)]
    pub eval_games: u32,
    /// Seconds between evaluations
    #[arg(long, default_value_t = DEFAULT_EVAL_SECONDS as f64)]
    pub eval_seconds: f64,
    /// Evaluate and save a moving average of the parameters with this decay per update
    /// (e.g. 0.99998 averages over the last ~50,000 updates; 0 for the raw parameters)
    #[arg(long, default_value_t = 0.0)]
    pub average_decay: f64,
}

/// The training run the flags describe, checked.
fn config_from_args(args: &TrainArgs) -> Result<A3cConfig> {
    let (pits, seeds) = parse_board(&args.board)?;
    if args.workers == 0 || args.workers > 64 {
        bail!(usage(format!(
            "--workers must be 1 to 64, got {}",
            args.workers
        )));
    }
    if args.minutes.is_none() && args.episodes.is_none() {
        bail!(usage("give --minutes or --episodes"));
    }
    let positive = |name: &str, v: f64| -> Result<()> {
        if !(v.is_finite() && v > 0.0) {
            bail!(usage(format!("--{name} must be above 0, got {v}")));
        }
        Ok(())
    };
    if let Some(m) = args.minutes {
        positive("minutes", m)?;
    }
    positive("lr", args.lr)?;
    positive("eval-seconds", args.eval_seconds)?;
    if !(0.0..=1.0).contains(&args.gamma) {
        bail!(usage(format!("--gamma must be 0 to 1, got {}", args.gamma)));
    }
    if !(0.0..1.0).contains(&args.average_decay) {
        bail!(usage(format!(
            "--average-decay must be at least 0 and below 1, got {}",
            args.average_decay
        )));
    }
    if args.n_steps == 0 || args.n_steps > 1000 || args.hidden == 0 || args.hidden > 4096 {
        bail!(usage("--n-steps must be 1 to 1000 and --hidden 1 to 4096"));
    }
    Ok(A3cConfig {
        pits,
        seeds,
        rules: args.rules.rules,
        workers: args.workers,
        episodes: args.episodes,
        time: args.minutes.map(|m| Duration::from_secs_f64(m * 60.0)),
        seed: args.seed,
        hidden: args.hidden,
        learning_rate: args.lr,
        gamma: args.gamma,
        n_steps: args.n_steps,
        beta: args.beta,
        shaping: args.shaping,
        opponents: parse_opponents(&args.opponents)?,
        eval_games: args.eval_games,
        eval_every: Duration::from_secs_f64(args.eval_seconds),
        average_decay: args.average_decay,
        ..A3cConfig::default()
    })
}

/// Writes `net` to `path` with what made it in its metadata, so a model file says how to
/// train it again.
fn save_model(net: &Net, evaluation: &Evaluation, command_line: &str, path: &str) -> Result<()> {
    let mut net = net.clone();
    net.info
        .insert("trained_by".into(), command_line.to_string());
    net.info
        .insert("episodes".into(), evaluation.episodes.to_string());
    net.info.insert(
        "training_seconds".into(),
        format!("{:.0}", evaluation.seconds),
    );
    net.info.insert("evaluation".into(), evaluation.to_string());
    net.info.insert(
        "generator".into(),
        format!("kalah-tuner {}", env!("CARGO_PKG_VERSION")),
    );
    let bytes = net.to_safetensors().map_err(|e| anyhow!(e))?;
    Ok(write_atomically(Path::new(path), &bytes)?)
}

/// The progress line: games, speed, updates, the running loss and the last evaluation.
fn progress_message(p: &Progress) -> String {
    let eval = p.last_evaluation.map(|e| e.to_string()).unwrap_or_default();
    let loss = p
        .loss
        .map(|l| {
            format!(
                "loss {:.3} value {:.3} entropy {:.2}",
                l.loss, l.value_loss, l.entropy
            )
        })
        .unwrap_or_default();
    format!(
        "{} games {:.0}/s, {} updates, {loss} | {eval}",
        p.episodes,
        p.episodes as f64 / p.elapsed.as_secs_f64().max(1e-9),
        p.updates
    )
}

pub(crate) fn run(args: &TrainArgs) -> Result<()> {
    let config = config_from_args(args)?;
    // candle splits every matrix product across rayon threads; for 128-wide layers that costs
    // more than it saves, and the workers already keep the cores busy. Set before any thread
    // starts.
    if std::env::var_os("RAYON_NUM_THREADS").is_none() {
        std::env::set_var("RAYON_NUM_THREADS", "1");
    }
    let stop =
        stop_flag("interrupted: stopping and saving the best model (Ctrl-C again to stop now)");
    let command_line = std::env::args().collect::<Vec<_>>().join(" ");
    let bar = progress_bar(1000, "{spinner} [{wide_bar}] {msg} ETA {eta}");
    eprintln!(
        "train-a3c: Kalah({},{}) {}, {} workers, opponents {}, seed {}",
        config.pits,
        config.seeds,
        config.rules,
        config.workers,
        config
            .opponents
            .iter()
            .map(|(o, w)| format!("{o}={w}"))
            .collect::<Vec<_>>()
            .join(","),
        config.seed
    );
    let report = train(
        &config,
        &stop,
        |p| {
            let msg = progress_message(p);
            match &bar {
                Some(bar) => {
                    bar.set_position((p.fraction * 1000.0) as u64);
                    bar.set_message(msg);
                }
                None if p.new_evaluation => eprintln!("{:.0} s: {msg}", p.elapsed.as_secs_f64()),
                None => {}
            }
        },
        |net, e| save_model(net, e, &command_line, &args.out),
    )?;
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    for e in &report.evaluations {
        eprintln!("{:>7.0} s {:>8} games: {e}", e.seconds, e.episodes);
    }
    eprintln!(
        "{} games, {} updates in {:.1} s; best: {} (after {} games)",
        report.episodes,
        report.updates,
        report.seconds,
        report.best_evaluation,
        report.best_evaluation.episodes
    );
    if report.evaluations.is_empty() {
        save_model(
            &report.last,
            &report.best_evaluation,
            &command_line,
            &args.out,
        )?;
    }
    println!("{}", args.out);
    Ok(())
}
