//! `perft`, `solve` and `move`: one position in, one number out (the last line of standard
//! output), so scripts can read it.

use std::time::Instant;

use anyhow::{bail, Result};
use clap::Args;

use super::args::{thread_pool, usage, PieArg, RulesArg};
use crate::agents::{rng_from_seed, AgentSpec};
use crate::game::{parse_board, parse_kpn, perft, Position};
use crate::search::egdb::default_dir;
use crate::search::{Egdb, Solver};

#[derive(Args, Debug)]
pub struct PerftArgs {
    /// Position in KPN (default: the start of Kalah(6,4))
    #[arg(long)]
    pub position: Option<String>,
    #[arg(long)]
    pub depth: u32,
    #[command(flatten)]
    pub rules: RulesArg,
    #[command(flatten)]
    pub pie: PieArg,
    /// Also print the count after each first move
    #[arg(long)]
    pub divide: bool,
}

#[derive(Args, Debug)]
pub struct SolveArgs {
    /// Position in KPN
    #[arg(long, conflicts_with = "board")]
    pub position: Option<String>,
    /// Start position of Kalah(m,n), written m,n
    #[arg(long)]
    pub board: Option<String>,
    #[command(flatten)]
    pub rules: RulesArg,
    #[command(flatten)]
    pub pie: PieArg,
    /// Also print the exact value of every legal move
    #[arg(long)]
    pub moves: bool,
    /// Folder of endgame databases (`egdb build`); the largest one for the board and rules is
    /// used (default: KALAH_TUNER_EGDB_DIR, else ~/.cache/kalah-tuner/egdb)
    #[arg(long)]
    pub egdb_dir: Option<std::path::PathBuf>,
    /// Search without an endgame database even when one is built
    #[arg(long, conflicts_with = "egdb_dir")]
    pub no_egdb: bool,
    /// When the folder holds no database for the board and rules and the position has more
    /// than 24 seeds in its pits: `auto` first builds the largest database within --egdb-mb
    /// into the folder (with progress; Kalah(6,n): 18 seeds, 82 MiB, about 10 s on two
    /// cores), `never` searches without one
    #[arg(long, value_enum, default_value_t = EgdbBuild::Auto)]
    pub egdb_build: EgdbBuild,
    /// Largest database that `--egdb-build auto` builds, in MiB (the default is the size that
    /// solves fastest from nothing; a larger one pays when it is reused)
    // Each two seeds more take about three times as long to build and save a solve less than
    // that: Kalah(6,4) standard from nothing on two cores (2026-11-27) took 4.0 s to build +
    // 45.6 s to solve with 16 seeds (30 MiB), 16.7 + 27.5 s with 18 (82 MiB), 51 to 67 + 14 s
    // with 20 (215 MiB); docs/solver.md.
    #[arg(long, default_value_t = 96, value_parser = clap::value_parser!(u64).range(1..=65536))]
    pub egdb_mb: u64,
    /// Most memory of the transposition table, in MiB (rounded down to a power of two of
    /// slots); it starts small and grows as the search fills it
    #[arg(long, default_value_t = 400, value_parser = clap::value_parser!(u64).range(1..=65536))]
    pub table_mb: u64,
    /// Threads that share the search (default: all cores)
    #[arg(long)]
    pub threads: Option<usize>,
}

/// Whether `solve` builds a missing endgame database.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum EgdbBuild {
    Auto,
    Never,
}

/// Positions with at most this many seeds in the pits solve in about a second without a
/// database (docs/solver.md), so `solve` builds none for them.
const EGDB_WORTH_BUILDING_ABOVE: u32 = 24;

#[derive(Args, Debug)]
pub struct MoveArgs {
    /// Agent spec, e.g. minimax:6 or heuristic:hunter10:published:4 or JSON
    #[arg(long)]
    pub agent: String,
    #[arg(long)]
    pub position: String,
    #[command(flatten)]
    pub rules: RulesArg,
    #[command(flatten)]
    pub pie: PieArg,
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
}

fn position_arg(text: &str) -> Result<Position> {
    Ok(parse_kpn(text)?)
}

/// How a move is written on the command line: its number, or `SWAP`.
fn move_text(mv: usize) -> String {
    if mv == crate::game::SWAP {
        "SWAP".into()
    } else {
        mv.to_string()
    }
}

pub fn run_perft(args: &PerftArgs) -> Result<()> {
    let pos = match &args.position {
        Some(text) => position_arg(text)?,
        None => Position::start(6, 4)?,
    }
    .with_pie(args.pie.pie);
    if args.depth > 30 {
        bail!(usage(format!(
            "--depth must be at most 30, got {}",
            args.depth
        )));
    }
    let start = Instant::now();
    if args.divide {
        for (mv, n) in crate::game::perft::perft_divide(&pos, args.depth, args.rules.rules) {
            println!("{}: {n}", move_text(mv));
        }
    }
    let count = perft(&pos, args.depth, args.rules.rules);
    eprintln!(
        "perft({}) of {pos} in {:.3} s",
        args.depth,
        start.elapsed().as_secs_f64()
    );
    println!("{count}");
    Ok(())
}

pub fn run_solve(args: &SolveArgs) -> Result<()> {
    let pos = match (&args.position, &args.board) {
        (Some(text), None) => position_arg(text)?,
        (None, Some(board)) => {
            let (m, n) = parse_board(board)?;
            Position::start(m, n)?
        }
        _ => bail!(usage("give --position <KPN> or --board <m,n>")),
    }
    .with_pie(args.pie.pie);
    let start = Instant::now();
    let mut solver = Solver::with_table_mb(args.rules.rules, args.table_mb);
    if !args.no_egdb {
        let dir = args.egdb_dir.clone().unwrap_or_else(default_dir);
        let mut found = Egdb::open_largest(&dir, pos.pits(), args.rules.rules)?;
        if found.is_none() && pos.seeds_in_pits() > EGDB_WORTH_BUILDING_ABOVE {
            found = missing_database(args, &pos, &dir)?;
        }
        if let Some(db) = found {
            eprintln!(
                "endgame database: up to {} seeds ({:.1} MiB), opened in {:.3} s",
                db.max_seeds(),
                db.entries() as f64 / (1u64 << 20) as f64,
                start.elapsed().as_secs_f64()
            );
            solver.set_egdb(std::sync::Arc::new(db));
        }
    }
    let pool = thread_pool(args.threads)?;
    solver.set_parallel(pool.current_num_threads() > 1);
    let (value, stats) = pool.install(|| {
        solver.solve_observed(&pos, &mut |report| {
            eprintln!(
                "probe {}: value in [{}, {}] after {} nodes, {:.1} s",
                report.probe,
                report.lower,
                report.upper,
                report.nodes,
                start.elapsed().as_secs_f64()
            )
        })
    });
    if args.moves && !pos.is_game_over() {
        for (mv, v) in pool.install(|| solver.solve_moves(&pos)) {
            println!("move {}: {v}", move_text(mv));
        }
    }
    eprintln!(
        "solved {pos} ({}) in {:.3} s, {} nodes ({} by the busiest thread), {} probes, table {} MiB",
        args.rules.rules,
        start.elapsed().as_secs_f64(),
        stats.nodes,
        stats.busiest,
        stats.probes,
        solver.table_bytes() >> 20
    );
    println!("{value}");
    Ok(())
}

/// No database for the board and rules in `dir`: build the one `--egdb-build auto` asks for
/// and open it, or say how to build one.
fn missing_database(
    args: &SolveArgs,
    pos: &Position,
    dir: &std::path::Path,
) -> Result<Option<Egdb>> {
    let rules = args.rules.rules;
    let index = super::egdb::index_within(pos.pits(), args.egdb_mb << 20, pos.seeds_in_pits());
    let Some(index) = index else {
        return Ok(None);
    };
    if args.egdb_build == EgdbBuild::Never {
        eprintln!(
            "no endgame database for {}-pit boards ({rules}) in {}: `kalah-tuner egdb build --pits {} --seeds {} --rules {rules}` ({:.0} MiB) would make this solve much faster",
            pos.pits(),
            dir.display(),
            pos.pits(),
            index.max_seeds(),
            index.entries() as f64 / (1u64 << 20) as f64
        );
        return Ok(None);
    }
    eprintln!(
        "no endgame database for {}-pit boards ({rules}) in {}: building one first (--egdb-build never skips this)",
        pos.pits(),
        dir.display()
    );
    let path = super::egdb::build_into(dir, &index, rules, args.threads)?;
    Ok(Some(Egdb::open(&path)?))
}

pub fn run_move(args: &MoveArgs) -> Result<()> {
    let spec = AgentSpec::parse(&args.agent)?;
    let pos = position_arg(&args.position)?.with_pie(args.pie.pie);
    if pos.is_game_over() {
        bail!(usage(format!(
            "the game is over in {pos}: there is no move to make"
        )));
    }
    let mut agent = spec.build(args.rules.rules)?;
    let mut rng = rng_from_seed(args.seed);
    let start = Instant::now();
    let decision = agent.choose(&pos, &mut rng);
    let work = match decision.playouts {
        0 => format!("{} nodes", decision.nodes),
        playouts => format!("{playouts} playouts"),
    };
    let value = decision
        .value
        .map(|v| format!(", {}", v.describe()))
        .unwrap_or_default();
    eprintln!(
        "{spec}: move {} after {work} in {:.3} ms{value}",
        move_text(decision.mv),
        start.elapsed().as_secs_f64() * 1e3
    );
    println!("{}", move_text(decision.mv));
    Ok(())
}
