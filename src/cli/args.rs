//! What the commands share: the `--rules`, `--pie` and `--threads` arguments, and the usage
//! error that ends a command with exit status 2.

use anyhow::{Context, Result};
use clap::Args;

use crate::game::Rules;

#[derive(Args, Debug, Clone)]
pub(crate) struct RulesArg {
    /// Capture rule: standard, or empty-capture (capture even when the opposite pit is empty)
    #[arg(long, default_value = "standard", value_parser = parse_rules)]
    pub rules: Rules,
}

/// `--pie`, beside `--rules` wherever a game is set up.
#[derive(Args, Debug, Clone, Default)]
pub(crate) struct PieArg {
    /// The pie rule: South's first move earns no extra turn, then North may swap seats
    #[arg(long)]
    pub pie: bool,
}

pub(crate) fn parse_rules(s: &str) -> Result<Rules, crate::game::GameError> {
    s.parse::<Rules>()
}

/// A user mistake: reported on one line with exit status 2.
#[derive(Debug)]
pub(crate) struct UsageError(pub String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for UsageError {}
impl crate::game::UserError for UsageError {}
inventory::submit! { crate::game::UserErrorKind::of::<UsageError>() }

/// A `UsageError`: the user's mistake, reported with exit status 2.
pub(crate) fn usage(msg: impl Into<String>) -> anyhow::Error {
    UsageError(msg.into()).into()
}

/// The worker threads of one command, built once: `--threads N`, or all cores. Results never
/// depend on the count (games draw their random numbers from their place in the schedule).
pub(crate) fn thread_pool(threads: Option<usize>) -> Result<rayon::ThreadPool> {
    let mut builder = rayon::ThreadPoolBuilder::new();
    if let Some(n) = threads {
        if n == 0 || n > 256 {
            return Err(usage(format!("--threads must be 1 to 256, got {n}")));
        }
        builder = builder.num_threads(n);
    }
    builder.build().context("starting worker threads")
}

/// `--config FILE`: the file as one layer for the config loader (TOML or JSON by its name),
/// or none when the flag is absent.
pub(crate) fn config_layer(path: Option<&std::path::Path>) -> Result<Option<serde_json::Value>> {
    let Some(path) = path else {
        return Ok(None);
    };
    let text = std::fs::read_to_string(path)
        .map_err(|e| usage(format!("--config {}: {e}", path.display())))?;
    let layer = crate::ga::loader::parse_document(&text, crate::ga::loader::Format::of_path(path))
        .map_err(|e| usage(format!("--config {}: {e}", path.display())))?;
    Ok(Some(layer))
}
