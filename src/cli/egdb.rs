//! `egdb build` and `egdb list`: endgame databases in a cache folder, for the solver, the
//! `perfect` agent and search agents with `"egdb": true`.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use indicatif::ProgressBar;

use super::args::{thread_pool, usage, RulesArg};
use super::console::progress_bar;
use crate::search::egdb::{default_dir, BuildObserver, Egdb, EgdbError, EgdbIndex, MAX_EGDB_SEEDS};

#[derive(Args, Debug)]
pub(crate) struct EgdbArgs {
    #[command(subcommand)]
    pub command: EgdbCommand,
}

#[derive(Subcommand, Debug)]
pub(crate) enum EgdbCommand {
    /// Build the database of every position with at most --seeds seeds in the pits of a
    /// board of --pits pits a side, by retrograde analysis, into the cache folder
    Build(BuildArgs),
    /// List the databases in the cache folder
    List(DirArg),
}

#[derive(Args, Debug)]
pub(crate) struct DirArg {
    /// Cache folder (default: KALAH_TUNER_EGDB_DIR, else ~/.cache/kalah-tuner/egdb)
    #[arg(long)]
    pub dir: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub(crate) struct BuildArgs {
    /// Pits a side (1 to 8)
    #[arg(long)]
    pub pits: usize,
    /// Most seeds left in the pits (the database holds every count up to it)
    #[arg(long)]
    pub seeds: u32,
    #[command(flatten)]
    pub rules: RulesArg,
    #[command(flatten)]
    pub dir: DirArg,
    /// Worker threads (default: all cores)
    #[arg(long)]
    pub threads: Option<usize>,
    /// Build again even when the database is already there
    #[arg(long)]
    pub force: bool,
}

pub(crate) fn run(args: &EgdbArgs) -> Result<()> {
    match &args.command {
        EgdbCommand::Build(build) => run_build(build),
        EgdbCommand::List(dir) => run_list(dir),
    }
}

fn folder(dir: &DirArg) -> PathBuf {
    dir.dir.clone().unwrap_or_else(default_dir)
}

/// Progress on a terminal bar, or one line per level on standard error otherwise.
struct Progress {
    bar: Option<ProgressBar>,
}

impl BuildObserver for Progress {
    fn level(&self, k: u32, len: u64) {
        match &self.bar {
            Some(bar) => bar.set_message(format!("level {k} ({len} positions)")),
            None => eprintln!("level {k}: {len} positions"),
        }
    }
    fn advance(&self, n: u64) {
        if let Some(bar) = &self.bar {
            bar.inc(n);
        }
    }
}

fn run_build(args: &BuildArgs) -> Result<()> {
    let rules = args.rules.rules;
    let index = match EgdbIndex::new(args.pits, args.seeds) {
        Ok(index) => index,
        Err(e @ (EgdbError::Pits(_) | EgdbError::Seeds(_) | EgdbError::TooLarge { .. })) => {
            return Err(usage(e.to_string()))
        }
        Err(e) => return Err(e.into()),
    };
    let dir = folder(&args.dir);
    let path = dir.join(Egdb::file_name(args.pits, args.seeds, rules));
    if path.is_file() && !args.force {
        let db = Egdb::open(&path)?;
        eprintln!(
            "{} is already built ({} entries); --force builds it again",
            path.display(),
            db.entries()
        );
        println!("{}", path.display());
        return Ok(());
    }
    let path = build_into(&dir, &index, rules, args.threads)?;
    println!("{}", path.display());
    Ok(())
}

/// Builds the database `index` describes for `rules` into `dir`, with progress on standard
/// error, and returns its path. `solve` calls this too when it finds no database.
pub(crate) fn build_into(
    dir: &std::path::Path,
    index: &EgdbIndex,
    rules: crate::game::Rules,
    threads: Option<usize>,
) -> Result<PathBuf> {
    let (pits, seeds) = (index.pits(), index.max_seeds());
    let path = dir.join(Egdb::file_name(pits, seeds, rules));
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let pool = thread_pool(threads)?;
    eprintln!(
        "building Kalah({pits}) {rules} up to {seeds} seeds: {} positions ({:.1} MiB) into {}",
        index.entries(),
        index.entries() as f64 / (1u64 << 20) as f64,
        dir.display()
    );
    let progress = Progress {
        bar: progress_bar(
            index.entries(),
            "{elapsed_precise} [{bar:40}] {percent}% {msg} eta {eta}",
        ),
    };
    let start = Instant::now();
    let db = pool.install(|| Egdb::build(pits, seeds, rules, &progress))?;
    let built = start.elapsed().as_secs_f64();
    if let Some(bar) = &progress.bar {
        bar.finish_and_clear();
    }
    db.write(&path)?;
    eprintln!(
        "built in {built:.1} s, written in {:.1} s: {}",
        start.elapsed().as_secs_f64() - built,
        path.display()
    );
    Ok(path)
}

/// The database `solve` builds for a board of `pits` pits when it finds none: the most seeds
/// whose file fits `max_bytes`, and never more than the `seeds_in_pits` the position holds
/// (a larger one would cover nothing more). `None` when even a small one does not fit or
/// would not help.
pub(crate) fn index_within(pits: usize, max_bytes: u64, seeds_in_pits: u32) -> Option<EgdbIndex> {
    // Below this many seeds a database covers only endgames the search settles at once.
    const SMALLEST_USEFUL: u32 = 8;
    let mut best = None;
    for seeds in SMALLEST_USEFUL..=seeds_in_pits.min(MAX_EGDB_SEEDS) {
        match EgdbIndex::new(pits, seeds) {
            Ok(index) if index.entries() <= max_bytes => best = Some(index),
            _ => break,
        }
    }
    best
}

fn run_list(args: &DirArg) -> Result<()> {
    let dir = folder(args);
    let entries = match std::fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            eprintln!("no databases: {} does not exist", dir.display());
            return Ok(());
        }
        Err(e) => return Err(e).with_context(|| format!("reading {}", dir.display())),
    };
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "egdb"))
        .collect();
    paths.sort();
    for path in paths {
        match Egdb::open(&path) {
            Ok(db) => println!(
                "{}\tpits {}\t{}\tseeds {}\t{} bytes",
                path.display(),
                db.pits(),
                db.rules(),
                db.max_seeds(),
                db.entries()
            ),
            Err(e) => println!("{}\tunreadable: {e}", path.display()),
        }
    }
    Ok(())
}
