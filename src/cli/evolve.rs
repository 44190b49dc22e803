//! `kalah-tuner evolve`: a GA run without the server. Shows progress, writes the export
//! document after every generation (so an interruption never loses a finished generation) and
//! stops cleanly on Ctrl-C.

use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::time::Instant;

use anyhow::{Context, Result};
use clap::Args;
use indicatif::ProgressBar;

use super::console::{progress_bar, stop_flag, write_atomically, CpuBudget};
use super::{thread_pool, usage};
use crate::agents::FileAccess;
use crate::ga::benchmark::PanelGain;
use crate::ga::loader::{self, Format};
use crate::ga::{Evolution, ExportDocument, GaConfig, GenerationRecord};

#[derive(Args, Debug)]
pub struct EvolveArgs {
    /// Start from a preset: abrams (the blog), hunter (Hunter's thesis) or mankalah
    /// (Kalah(7,7) with the pie rule, the ManKalah engine's game)
    #[arg(long)]
    pub preset: Option<String>,
    /// Config file (.toml or .json), applied over the preset; may name its own "preset"
    #[arg(long)]
    pub config: Option<PathBuf>,
    #[arg(long)]
    pub seed: Option<u64>,
    #[arg(long)]
    pub population: Option<usize>,
    #[arg(long)]
    pub generations: Option<u32>,
    /// Search depth of the individuals
    #[arg(long)]
    pub depth: Option<u32>,
    /// Play every game under the pie rule (config field "pie")
    #[arg(long)]
    pub pie: bool,
    /// Worker threads (default: all cores); the result does not depend on it
    #[arg(long)]
    pub threads: Option<usize>,
    /// Where to write the export document (JSON)
    #[arg(long)]
    pub out: PathBuf,
    /// Also write every generation record, one JSON object a line
    #[arg(long)]
    pub records: Option<PathBuf>,
    /// Stop after the generation that uses up this many minutes of processor time, all
    /// threads together (20 is ten minutes on two cores); for comparing tuners at equal cost
    #[arg(long)]
    pub cpu_minutes: Option<f64>,
}

/// The config the flags describe: preset, then file, then single-field flags.
pub fn build_config(args: &EvolveArgs) -> Result<GaConfig> {
    let file = match &args.config {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| usage(format!("--config {}: {e}", path.display())))?;
            let layer = loader::parse_document(&text, Format::of_path(path))
                .map_err(|e| usage(format!("--config {}: {e}", path.display())))?;
            Some(layer)
        }
        None => None,
    };
    let mut flags = serde_json::Map::new();
    if let Some(seed) = args.seed {
        flags.insert("seed".into(), seed.into());
    }
    if let Some(p) = args.population {
        flags.insert("population".into(), p.into());
    }
    if let Some(g) = args.generations {
        flags.insert("generations".into(), g.into());
    }
    if let Some(d) = args.depth {
        flags.insert("depth".into(), d.into());
    }
    if args.pie {
        flags.insert("pie".into(), true.into());
    }
    let flags = serde_json::Value::Object(flags);
    let layers: Vec<&serde_json::Value> = file.iter().chain([&flags]).collect();
    Ok(loader::load(
        args.preset.as_deref(),
        &layers,
        &FileAccess::Any,
    )?)
}

/// The panel line of a measured generation: its leader's score and Elo against the panel,
/// and the champion's.
fn panel_line(record: &GenerationRecord) -> Option<String> {
    let benchmark = record.benchmark.as_ref()?;
    let leader = benchmark.leaders.first()?;
    let champion = record.champion.as_ref()?;
    let s = &leader.overall;
    let agreement = leader.agreement.as_ref().map_or(String::new(), |a| {
        format!(
            "; perfect moves {:.1}%, {:.3} seeds lost a move",
            100.0 * a.share,
            a.mean_loss
        )
    });
    Some(format!(
        "         panel: leader {} Elo {:+.0} [{:+.0}, {:+.0}]{}; champion from gen {} {}{agreement}",
        s.display_percent(),
        s.elo,
        s.elo_low,
        s.elo_high,
        if benchmark.new_champion {
            " (new champion)"
        } else {
            ""
        },
        champion.generation,
        champion.panel.overall.display_percent()
    ))
}

/// One line per generation for logs (the progress bar shows a shorter message).
fn generation_line(record: &GenerationRecord, games_per_sec: f64) -> String {
    let raced: Vec<u32> = record
        .individuals
        .iter()
        .filter_map(|i| i.raced_games)
        .collect();
    let racing = match (raced.iter().min(), raced.iter().max()) {
        (Some(least), Some(most)) => format!("  raced {least}-{most} games each"),
        _ => String::new(),
    };
    format!(
        "gen {:>4}  best {:.4}  mean {:.4}  min {:.4}  std {:.4}  diversity {:.4}  hall of fame {:.4} (gen {})  {:.0} games/s{racing}",
        record.generation,
        record.fitness.best,
        record.fitness.mean,
        record.fitness.min,
        record.fitness.std,
        record.diversity,
        record.hall_of_fame.fitness,
        record.hall_of_fame.generation,
        games_per_sec
    )
}

/// Shows a generation: the progress bar's message on a terminal, a line for logs otherwise,
/// and the panel line on measured generations.
fn report(bar: Option<&ProgressBar>, record: &GenerationRecord) {
    let secs = record.timing.wall_ms as f64 / 1e3;
    let games_per_sec = record.games_played as f64 / secs.max(1e-9);
    match bar {
        Some(bar) => {
            bar.set_message(format!(
                "best {:.3} mean {:.3} {:.0} games/s",
                record.fitness.best, record.fitness.mean, games_per_sec
            ));
            bar.inc(1);
        }
        None => println!("{}", generation_line(record, games_per_sec)),
    }
    if let Some(line) = panel_line(record) {
        match bar {
            Some(bar) => bar.println(line),
            None => println!("{line}"),
        }
    }
}

pub fn run(args: &EvolveArgs) -> Result<()> {
    let config = build_config(args)?;
    let budget = CpuBudget::new(args.cpu_minutes)?;
    let mut evolution = Evolution::new(config.clone())?;
    let games = evolution.games_per_generation();
    // First Ctrl-C: finish the generation under way, write, stop. Second: stop at once (the
    // document on disk already holds every finished generation).
    let stop = stop_flag("interrupted: stopping after this generation (Ctrl-C again to stop now)");
    let bar = progress_bar(
        config.generations as u64,
        "{spinner} gen {pos}/{len} [{wide_bar}] {msg} ETA {eta}",
    );
    eprintln!(
        "evolving {} individuals for {} generations ({} games a generation, {:.0} panel games on average, depth {}, seed {})",
        config.population,
        config.generations,
        games,
        config.benchmark_games_per_generation(),
        config.depth,
        config.seed
    );
    let mut record_file = match &args.records {
        Some(path) => Some(
            std::fs::File::create(path).with_context(|| format!("creating {}", path.display()))?,
        ),
        None => None,
    };
    let mut records: Vec<GenerationRecord> = Vec::new();
    let pool = thread_pool(args.threads)?;
    let started = Instant::now();
    while let Some(record) = pool.install(|| evolution.step()) {
        report(bar.as_ref(), &record);
        if let Some(file) = record_file.as_mut() {
            writeln!(file, "{}", serde_json::to_string(&record)?)?;
        }
        records.push(record);
        let doc = ExportDocument::from_run(&config, &records)?;
        write_atomically(&args.out, doc.to_json_pretty().as_bytes())?;
        if stop.load(Ordering::SeqCst) || budget.spent() {
            break;
        }
    }
    if let Some(bar) = &bar {
        bar.finish();
    }
    let doc = ExportDocument::from_run(&config, &records)?;
    let stopped = match evolution.stop_reason() {
        Some(reason) => format!("{reason:?}"),
        None if budget.spent() => "processor-time budget".to_string(),
        None => "interrupted".to_string(),
    };
    let chosen = match records.last().and_then(|r| r.champion.as_ref()) {
        Some(c) => format!(
            "champion (by the benchmark panel, {}) from generation {}, fitness {:.4}",
            c.panel.overall.display_percent(),
            doc.generation,
            doc.fitness
        ),
        None => format!(
            "best fitness {:.4} from generation {}",
            doc.fitness, doc.generation
        ),
    };
    eprintln!(
        "{} generations in {:.1} s, {} ({stopped}); {chosen}; wrote {}",
        records.len(),
        started.elapsed().as_secs_f64(),
        budget.describe_use(),
        args.out.display()
    );
    if let Some(line) = gain_over_first_leader(&records) {
        eprintln!("{line}");
    }
    println!("{}", serde_json::to_string(&doc.agent)?);
    Ok(())
}

/// What the run gained: its champion against the first measured generation's leader, on the
/// same panel games, so that a flat-looking curve and a real gain can be told apart.
fn gain_over_first_leader(records: &[GenerationRecord]) -> Option<String> {
    let (first_generation, first) = records.iter().find_map(|r| {
        let leader = r.benchmark.as_ref()?.leaders.first()?;
        Some((r.generation, leader))
    })?;
    let champion = records.last()?.champion.as_ref()?;
    if champion.generation == first_generation {
        return Some(format!(
            "the champion is generation {first_generation}'s leader: no later leader beat it on the panel"
        ));
    }
    let gain = PanelGain::of(&champion.panel, first)?;
    Some(format!(
        "champion against generation {first_generation}'s leader: {}; {}",
        gain.describe(),
        if gain.better {
            "better by a one-sided paired test at 95%"
        } else {
            "not shown better by a one-sided paired test at 95%"
        }
    ))
}
