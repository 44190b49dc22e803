//! `kalah-tuner evolve`: a GA run without the server. Shows progress, writes the export
//! document after every generation (so an interruption never loses a finished generation) and
//! stops cleanly on Ctrl-C.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};

use super::{thread_pool, usage};
use crate::ga::{Evolution, ExportDocument, GaConfig, GenerationRecord};

#[derive(Args, Debug)]
pub struct EvolveArgs {
    /// Start from a preset: abrams (the blog) or hunter (Hunter's thesis)
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
    /// Worker threads (default: all cores); the result does not depend on it
    #[arg(long)]
    pub threads: Option<usize>,
    /// Where to write the export document (JSON)
    #[arg(long)]
    pub out: PathBuf,
    /// Also write every generation record, one JSON object a line
    #[arg(long)]
    pub records: Option<PathBuf>,
}

/// The config the flags describe: preset, then file, then single-field flags.
pub fn build_config(args: &EvolveArgs) -> Result<GaConfig> {
    let mut config = match &args.preset {
        Some(name) => GaConfig::preset(name)?,
        None => GaConfig::default(),
    };
    if let Some(path) = &args.config {
        let text = std::fs::read_to_string(path)
            .map_err(|e| usage(format!("--config {}: {e}", path.display())))?;
        let patch: serde_json::Value = if path.extension().is_some_and(|e| e == "toml") {
            let table: toml::Table = toml::from_str(&text)
                .map_err(|e| usage(format!("--config {}: {e}", path.display())))?;
            serde_json::to_value(table).context("converting TOML")?
        } else {
            serde_json::from_str(&text)
                .map_err(|e| usage(format!("--config {}: {e}", path.display())))?
        };
        config = match patch.get("preset").and_then(|p| p.as_str()) {
            // A file that names a preset starts from it, as GaConfig::from_json_value does.
            Some(_) => GaConfig::from_json_value(&patch)?,
            None => config.with_overrides(&patch)?,
        };
    }
    let mut patch = serde_json::Map::new();
    if let Some(seed) = args.seed {
        patch.insert("seed".into(), seed.into());
    }
    if let Some(p) = args.population {
        patch.insert("population".into(), p.into());
    }
    if let Some(g) = args.generations {
        patch.insert("generations".into(), g.into());
    }
    if let Some(d) = args.depth {
        patch.insert("depth".into(), d.into());
    }
    if !patch.is_empty() {
        config = config.with_overrides(&serde_json::Value::Object(patch))?;
    }
    config.validate()?;
    Ok(config)
}

/// Writes through a temporary file and a rename, so readers never see half a document.
fn write_atomically(path: &Path, text: &str) -> Result<()> {
    let tmp = path.with_extension("json.tmp");
    std::fs::write(&tmp, text).with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}

pub fn run(args: &EvolveArgs) -> Result<()> {
    let config = build_config(args)?;
    let mut evolution = Evolution::new(config.clone())?;
    let games = evolution.games_per_generation();

    // First Ctrl-C: finish the generation under way, write, stop. Second: stop at once (the
    // document on disk already holds every finished generation).
    let interrupts = Arc::new(AtomicU32::new(0));
    {
        let interrupts = Arc::clone(&interrupts);
        let _ = ctrlc::set_handler(move || {
            if interrupts.fetch_add(1, Ordering::SeqCst) >= 1 {
                eprintln!("\ninterrupted again: stopping now");
                std::process::exit(130);
            }
            eprintln!("\ninterrupted: stopping after this generation (Ctrl-C again to stop now)");
        });
    }

    let terminal = std::io::stderr().is_terminal();
    let bar = if terminal {
        let bar = ProgressBar::new(config.generations as u64);
        bar.set_style(
            ProgressStyle::with_template("{spinner} gen {pos}/{len} [{wide_bar}] {msg} ETA {eta}")
                .context("progress bar template")?,
        );
        Some(bar)
    } else {
        None
    };
    eprintln!(
        "evolving {} individuals for {} generations ({} games a generation, depth {}, seed {})",
        config.population, config.generations, games, config.depth, config.seed
    );

    let mut records: Vec<GenerationRecord> = Vec::new();
    let mut record_file = match &args.records {
        Some(path) => Some(
            std::fs::File::create(path).with_context(|| format!("creating {}", path.display()))?,
        ),
        None => None,
    };
    let pool = thread_pool(args.threads)?;
    let started = Instant::now();
    loop {
        let step = pool.install(|| evolution.step());
        let Some(record) = step else { break };
        let secs = record.timing.wall_ms as f64 / 1e3;
        let games_per_sec = record.games_played as f64 / secs.max(1e-9);
        let line = format!(
            "gen {:>4}  best {:.4}  mean {:.4}  min {:.4}  std {:.4}  diversity {:.4}  hall of fame {:.4} (gen {})  {:.0} games/s",
            record.generation,
            record.fitness.best,
            record.fitness.mean,
            record.fitness.min,
            record.fitness.std,
            record.diversity,
            record.hall_of_fame.fitness,
            record.hall_of_fame.generation,
            games_per_sec
        );
        match &bar {
            Some(bar) => {
                bar.set_message(format!(
                    "best {:.3} mean {:.3} {:.0} games/s",
                    record.fitness.best, record.fitness.mean, games_per_sec
                ));
                bar.inc(1);
            }
            None => println!("{line}"),
        }
        if let Some(file) = record_file.as_mut() {
            use std::io::Write;
            writeln!(file, "{}", serde_json::to_string(&record)?)?;
        }
        records.push(record);
        let doc = ExportDocument::from_run(&config, &records)?;
        write_atomically(&args.out, &doc.to_json_pretty())?;
        if interrupts.load(Ordering::SeqCst) > 0 {
            break;
        }
    }
    if let Some(bar) = &bar {
        bar.finish();
    }
    let doc = ExportDocument::from_run(&config, &records)?;
    let stopped = match evolution.stop_reason() {
        Some(reason) => format!("{reason:?}"),
        None => "interrupted".to_string(),
    };
    eprintln!(
        "{} generations in {:.1} s ({stopped}); best fitness {:.4} from generation {}; wrote {}",
        records.len(),
        started.elapsed().as_secs_f64(),
        doc.fitness,
        doc.generation,
        args.out.display()
    );
    println!("{}", serde_json::to_string(&doc.agent)?);
    Ok(())
}
