//! `kalah-tuner evolve`: a run of a population tuner (the GA, CMA-ES or SPSA) without the
//! server, through the tuning engine's [`Driver`]. Shows progress, writes the export document after every generation (so an interruption never loses a finished generation) and
//! stops cleanly on Ctrl-C.

use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::time::Instant;

use anyhow::Result;
use clap::Args;

use super::args::{config_layer, thread_pool, usage};
use super::console::{stop_flag, CpuBudget};
use super::progress::RunConsole;
use crate::agents::FileAccess;
use crate::ga::GaConfig;
use crate::search::Budget;
use crate::tune::panel::PanelGain;
use crate::tune::GenerationRecord;
use crate::tune::{Driver, Ended, ExportFile, Observer, RecordsFile, StepControl, TunerConfig};

/// The tuners `evolve` runs, as its `--tuner` offers them: every registered tuner that breeds
/// generations of a population (`learn` runs the others).
fn population_tuner_names() -> clap::builder::PossibleValuesParser {
    clap::builder::PossibleValuesParser::new(crate::tune::tuner_names_breeding(true))
}

#[derive(Args, Debug)]
pub(crate) struct EvolveArgs {
    /// The tuner that breeds each generation: ga (the genetic algorithm) or another population
    /// tuner of docs/explanation/tuners.md; all play their generations by the same config
    /// fields. Default: the config file's "tuner", else ga
    #[arg(long, value_parser = population_tuner_names())]
    pub tuner: Option<String>,
    /// Start from a preset: abrams (the blog), hunter (Hunter's thesis), mankalah
    /// (Kalah(7,7) with the pie rule, the ManKalah engine's game) or main-job (the README's
    /// main job, configs/main-job.toml)
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
pub(crate) fn build_config(args: &EvolveArgs) -> Result<TunerConfig> {
    let file = config_layer(args.config.as_deref())?;
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
    let named = args
        .tuner
        .as_deref()
        .or_else(|| file.as_ref()?.get("tuner")?.as_str());
    // The tuners that breed generations of a population; `learn` runs the others.
    let population = crate::tune::tuner_names_breeding(true);
    if let Some(tuner) = named.filter(|t| !population.contains(t)) {
        return Err(usage(format!(
            "tuner: evolve runs {} (learn runs {}); got {tuner:?}",
            population.join(", "),
            crate::tune::tuner_names_breeding(false).join(", ")
        )));
    }
    Ok(crate::tune::load_tuner(
        args.tuner.as_deref(),
        args.preset.as_deref(),
        &layers,
        &FileAccess::Any,
    )?)
}

pub(crate) fn run(args: &EvolveArgs) -> Result<()> {
    let tuner_config = build_config(args)?;
    let config: GaConfig = crate::ga::tuner::population_of(&tuner_config)
        .cloned()
        .ok_or_else(|| {
            anyhow::anyhow!("evolve runs the population tuners; learn runs the others")
        })?;
    let budget = CpuBudget::new(args.cpu_minutes)?;
    let pool = thread_pool(args.threads)?;
    let mut driver = pool.install(|| Driver::open(tuner_config.clone(), None))?;
    eprintln!(
        "{} {} individuals for {} generations ({} games a generation, {:.0} panel games on average, depth {}, seed {})",
        match tuner_config.tuner() {
            "ga" => "evolving".to_string(),
            other => format!("tuning with {other}:"),
        },
        config.population,
        config.generations,
        config.games_per_generation(),
        config.benchmark_games_per_generation(),
        config.depth,
        config.seed
    );
    // First Ctrl-C: finish the generation under way, write, stop. Second: stop at once (the
    // document on disk already holds every finished generation).
    let stop = stop_flag("interrupted: stopping after this generation (Ctrl-C again to stop now)");
    let control = StepControl::new(Budget::unlimited())
        .with_go_on(move |_| !stop.load(Ordering::SeqCst) && !budget.spent());
    let mut console = RunConsole::new(driver.length(), "gen");
    let mut export = ExportFile::new(&args.out);
    let mut records = args.records.as_ref().map(RecordsFile::create).transpose()?;
    let started = Instant::now();
    let ended = {
        let mut observers: Vec<&mut dyn Observer> = vec![&mut console, &mut export];
        if let Some(records) = records.as_mut() {
            observers.push(records);
        }
        pool.install(|| driver.run(&control, &mut observers))?
    };
    console.finish();
    let doc = export
        .document()
        .ok_or_else(|| anyhow::anyhow!("the run made no generation"))?;
    let stopped = match ended {
        Ended::Finished(reason) => format!("{reason:?}"),
        Ended::Stopped if budget.spent() => "processor-time budget".to_string(),
        Ended::Stopped => "interrupted".to_string(),
    };
    let last = driver.last();
    let chosen = match last.and_then(|r| r.champion.as_ref()) {
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
        console.records,
        started.elapsed().as_secs_f64(),
        budget.describe_use(),
        args.out.display()
    );
    if let Some(line) = last.and_then(|last| gain_over_first_leader(&console, last)) {
        eprintln!("{line}");
    }
    println!("{}", serde_json::to_string(&doc.agent)?);
    Ok(())
}

/// What the run gained: its champion against the first measured generation's leader, on the
/// same panel games, so that a flat-looking curve and a real gain can be told apart.
fn gain_over_first_leader(console: &RunConsole, last: &GenerationRecord) -> Option<String> {
    let (first_generation, first) = console.first_leader.as_ref()?;
    let first_generation = *first_generation;
    let champion = last.champion.as_ref()?;
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
