//! `kalah-tuner bench --cost-runs FILE`: whole runs (or their first generations) of every
//! tuner, each with the processor time it took on one thread, against what the cost model
//! estimates for the same config: the check that the estimates the server refuses runs by
//! hold for presets, wide boards, learners and large panels, not only for the single game
//! sides `bench --cost` times (docs/results/performance.md#cost-estimates).
//!
//! The file is TOML, one `[[run]]` table a run: its `name`, `tuner`, optional `preset`,
//! optional `config_file` (read as `evolve --config` reads one) and `config` (a partial config
//! laid over both), and what was measured (`measured_cpu_s`, `measured_on`). With
//! `--cost-measure` each selected run is played to its end on one thread, its processor time
//! taken, and the file written back with the new figures.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};

use super::args::config_layer;
use super::console::process_cpu_seconds;
use crate::agents::FileAccess;
use crate::search::Budget;
use crate::store::GenerationPoint;
use crate::tune::{describe_bytes, TunerConfig};
use crate::tune::{load_tuner, DriveError, Driver, GenerationRecord, Observer, StepControl};

/// The comment every written file opens with: the file says how to read and remake itself.
const HEADER: &str = "\
# Runs of every tuner with the processor time each took on one thread (a quiet machine), checked
# against the cost model's estimate by `kalah-tuner bench --cost-runs docs/run-costs.toml` and by
# tests/tuners.rs (every estimate within 2x). Remeasure with --cost-measure (--cost-select NAME
# for some); docs/results/performance.md#cost-estimates explains the figures.

";

/// A recorded run.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RecordedRun {
    name: String,
    tuner: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    preset: Option<String>,
    /// A config file, relative to the directory the command runs in (the repository's root).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    config_file: Option<PathBuf>,
    /// Fields laid over the preset and the file.
    #[serde(default, skip_serializing_if = "toml::Table::is_empty")]
    config: toml::Table,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    measured_cpu_s: Option<f64>,
    /// The run's records as the store writes them (the text columns of each stored
    /// generation: the record's JSON, the best weights and the panel point), in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    measured_record_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    measured_on: Option<String>,
}

/// Counts the bytes of the text columns a stored generation takes: the record's JSON, the
/// best weights' and the panel point's (`Store::write_generation`).
#[derive(Default)]
struct RecordBytes(u64);

impl Observer for RecordBytes {
    fn record(&mut self, _: &TunerConfig, record: &GenerationRecord) -> Result<(), DriveError> {
        let point = GenerationPoint::of(record);
        // Serialising plain data with string keys cannot fail.
        let len = |json: serde_json::Result<String>| json.map_or(0, |j| j.len() as u64);
        self.0 += len(serde_json::to_string(record))
            + len(serde_json::to_string(&point.best_weights))
            + point
                .panel
                .as_ref()
                .map_or(0, |panel| len(serde_json::to_string(panel)));
        Ok(())
    }
}

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RunFile {
    #[serde(default)]
    run: Vec<RecordedRun>,
}

impl RecordedRun {
    fn tuner_config(&self) -> Result<TunerConfig> {
        let file = config_layer(self.config_file.as_deref())?;
        let patch = serde_json::to_value(&self.config)
            .with_context(|| format!("run {:?}: its config", self.name))?;
        let layers: Vec<&serde_json::Value> = file.iter().chain([&patch]).collect();
        load_tuner(
            Some(&self.tuner),
            self.preset.as_deref(),
            &layers,
            &FileAccess::Any,
        )
        .with_context(|| format!("run {:?}", self.name))
    }

    /// Plays the whole run on a one-thread pool: its processor time in seconds and its
    /// records' bytes.
    fn measure(&self, config: TunerConfig) -> Result<(f64, u64)> {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build()?;
        let mut bytes = RecordBytes::default();
        let before = process_cpu_seconds();
        pool.install(|| -> Result<()> {
            let mut driver = Driver::open(config, None)?;
            driver.run(&StepControl::new(Budget::unlimited()), &mut [&mut bytes])?;
            Ok(())
        })
        .with_context(|| format!("run {:?}", self.name))?;
        Ok((process_cpu_seconds() - before, bytes.0))
    }
}

fn read(path: &Path) -> Result<RunFile> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    toml::from_str(&text).with_context(|| format!("reading {}", path.display()))
}

/// Seconds with three significant digits or so.
fn seconds(s: f64) -> String {
    match s {
        s if s >= 100.0 => format!("{s:.0}"),
        s if s >= 10.0 => format!("{s:.1}"),
        s => format!("{s:.2}"),
    }
}

pub(crate) fn run(path: &Path, measure: bool, select: Option<&str>) -> Result<()> {
    let mut file = read(path)?;
    let chosen = |run: &RecordedRun| select.is_none_or(|text| run.name.contains(text));
    if !file.run.iter().any(chosen) {
        bail!("{}: no run to show", path.display());
    }
    println!(
        "| run | estimate, s | measured, s | estimate / measured | records, estimate | records, measured | estimate / measured | measured on |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for i in 0..file.run.len() {
        if !chosen(&file.run[i]) {
            continue;
        }
        // A config the cost cap refuses is shown, not measured: the table is of runs a
        // server would take.
        let config = match file.run[i].tuner_config() {
            Ok(config) => config,
            Err(e) => {
                println!(
                    "| {} | refused: {e:#} | - | - | - | - | - | - |",
                    file.run[i].name
                );
                continue;
            }
        };
        let estimate = config.estimated_core_hours() * 3600.0;
        let estimated_bytes = config.estimated_storage_bytes();
        if measure {
            let (cpu, bytes) = file.run[i].measure(config)?;
            file.run[i].measured_cpu_s = Some((cpu * 100.0).round() / 100.0);
            file.run[i].measured_record_bytes = Some(bytes);
            file.run[i].measured_on = Some(today());
            // Written after every run, so that a long measurement stopped half-way keeps
            // what it measured.
            let text = toml::to_string_pretty(&file).context("writing the runs as TOML")?;
            std::fs::write(path, format!("{HEADER}{text}"))
                .with_context(|| format!("writing {}", path.display()))?;
        }
        let run = &file.run[i];
        let (measured, ratio) = match run.measured_cpu_s {
            Some(m) => (seconds(m), format!("{:.2}", estimate / m)),
            None => ("-".into(), "-".into()),
        };
        let (stored, stored_ratio) = match run.measured_record_bytes {
            Some(b) if b > 0 => (
                describe_bytes(b),
                format!("{:.2}", estimated_bytes as f64 / b as f64),
            ),
            _ => ("-".into(), "-".into()),
        };
        println!(
            "| {} | {} | {measured} | {ratio} | {} | {stored} | {stored_ratio} | {} |",
            run.name,
            seconds(estimate),
            describe_bytes(estimated_bytes),
            run.measured_on.as_deref().unwrap_or("-")
        );
    }
    Ok(())
}

/// Today's date (UTC), as the results tables write it.
fn today() -> String {
    time::OffsetDateTime::now_utc().date().to_string()
}
