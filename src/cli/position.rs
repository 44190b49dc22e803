//! `perft`, `solve` and `move`: one position in, one number out (the last line of standard
//! output), so scripts can read it.

use std::time::Instant;

use anyhow::{bail, Result};
use clap::Args;

use super::args::{thread_pool, usage, PieArg, RulesArg};
use crate::agents::{rng_from_seed, AgentSpec};
use crate::game::{parse_board, parse_kpn, perft, Position};
use crate::search::egdb::default_dir;
use crate::search::guess::GUESS_NODES;
use crate::search::{first_guess, Egdb, Solver};

#[derive(Args, Debug)]
pub(crate) struct PerftArgs {
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
pub(crate) struct SolveArgs {
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
    /// into the folder (with progress; Kalah(6,4): 18 seeds, 82 MiB, 5 to 12 s on two cores;
    /// Kalah(6,5): 26 seeds, 2582 MiB, 262 to 286 s), `never` searches without one. A
    /// smaller database already there is used, and `solve` names the larger one to build
    #[arg(long, value_enum, default_value_t = EgdbBuild::Auto)]
    pub egdb_build: EgdbBuild,
    /// Largest database that `--egdb-build auto` builds, in MiB (default: the size that solves
    /// fastest from nothing, by the seeds in the pits: 96 MiB up to 48 seeds, the 18-seed
    /// database of 6 pits; 2600 MiB above, the 26-seed one; never more than half the memory
    /// available). A larger one pays when it is reused
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=65536))]
    pub egdb_mb: Option<u64>,
    /// Most memory of the transposition table, in MiB (rounded down to a power of two of
    /// slots); it starts small and grows as the search fills it (default: 400 up to 48 seeds
    /// in the pits; above, half the memory available beside the database)
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=65536))]
    pub table_mb: Option<u64>,
    /// Threads that share the search (default: all cores)
    #[arg(long)]
    pub threads: Option<usize>,
    /// The value expected: the first MTD(f) probe tests it, and a good guess saves the probes
    /// that climb to the value (a wrong one costs probes, never a wrong value). Default: for
    /// positions with more than 24 seeds in the pits, the mean value of the last two
    /// store-difference alpha-beta searches within 5 M positions (under a second); below, 0
    #[arg(long, allow_hyphen_values = true)]
    pub guess: Option<i32>,
}

/// Whether `solve` builds a missing endgame database.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum EgdbBuild {
    Auto,
    Never,
}

/// Positions with at most this many seeds in the pits solve in about a second without a
/// database (docs/explanation/solver.md), so `solve` builds none for them.
const EGDB_WORTH_BUILDING_ABOVE: u32 = 24;

/// Positions `solve` first tries to settle by the search alone, before building a database
/// or taking a first guess: about a tenth of a second on one core.
const QUICK_SOLVE_NODES: u64 = 1 << 20;

/// Positions with more seeds than this in the pits (the start of Kalah(6,5) and larger) get
/// the larger defaults of [`default_egdb_mb`] and [`default_table_mb`].
const LARGE_SOLVE_ABOVE: u32 = 48;

/// The database `--egdb-build auto` builds when `--egdb-mb` is not given. Measured from
/// nothing on two cores (docs/explanation/solver.md#why-these-defaults): for Kalah(6,4) the 18-seed
/// database (82 MiB) beats 16 and 20 seeds; for Kalah(6,5) the 26-seed one (2582 MiB, built in
/// 262 s) beat the 24-seed one (1194 MiB) by 1.66 times, build included, and the 24-seed one
/// beat the 18-seed one many times over.
fn default_egdb_mb(seeds_in_pits: u32, available_mib: Option<u64>) -> u64 {
    let wanted = if seeds_in_pits > LARGE_SOLVE_ABOVE {
        2600
    } else {
        96
    };
    match available_mib {
        Some(available) => wanted.min(available / 2).max(1),
        None => wanted,
    }
}

/// The table's cap when `--table-mb` is not given. Kalah(6,4) solves fastest with 400 MiB
/// (a larger cap lets the table grow and the search start its probes again for few positions
/// saved); Kalah(6,5)'s search fills any table, and half as many positions with a 4 GiB table
/// as with 256 MiB made its first probe 1.3 times faster (docs/explanation/solver.md).
fn default_table_mb(seeds_in_pits: u32, egdb_bytes: u64, available_mib: Option<u64>) -> u64 {
    const SMALL: u64 = 400;
    if seeds_in_pits <= LARGE_SOLVE_ABOVE {
        return SMALL;
    }
    match available_mib {
        Some(available) => (available.saturating_sub(egdb_bytes >> 20) / 2).clamp(SMALL, 65536),
        None => SMALL,
    }
}

/// Memory the system can still give, in MiB (Linux's `MemAvailable`); `None` where it is not
/// known, and the defaults then stay small.
fn available_mib() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = meminfo.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib >> 10)
}

#[derive(Args, Debug)]
pub(crate) struct MoveArgs {
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

pub(crate) fn run_perft(args: &PerftArgs) -> Result<()> {
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

pub(crate) fn run_solve(args: &SolveArgs) -> Result<()> {
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
    let dir = args.egdb_dir.clone().unwrap_or_else(default_dir);
    let mut egdb = if args.no_egdb {
        None
    } else {
        Egdb::open_largest(&dir, pos.pits(), args.rules.rules)?.map(std::sync::Arc::new)
    };
    let announce = |db: &Egdb| {
        eprintln!(
            "endgame database: up to {} seeds ({:.1} MiB), opened in {:.3} s",
            db.max_seeds(),
            db.entries() as f64 / (1u64 << 20) as f64,
            start.elapsed().as_secs_f64()
        )
    };
    if let Some(db) = &egdb {
        announce(db);
    }
    let pool = thread_pool(args.threads)?;
    let new_solver = |egdb: &Option<std::sync::Arc<Egdb>>| {
        let table_mb = args.table_mb.unwrap_or_else(|| {
            default_table_mb(
                pos.seeds_in_pits(),
                egdb.as_ref().map_or(0, |db| db.entries()),
                available_mib(),
            )
        });
        let mut solver = Solver::with_table_mb(args.rules.rules, table_mb);
        if let Some(db) = egdb {
            solver.set_egdb(db.clone());
        }
        solver.set_parallel(pool.current_num_threads() > 1);
        solver
    };
    let mut solver = new_solver(&egdb);
    let report = |report: &crate::search::ProbeReport| {
        eprintln!(
            "probe {}: value in [{}, {}] after {} nodes, {:.1} s",
            report.probe,
            report.lower,
            report.upper,
            report.nodes,
            start.elapsed().as_secs_f64()
        )
    };
    // The search alone first, within a small number of positions: most positions a user
    // asks about settle in a few thousand, and a database build or a first guess would cost
    // them many times the solve (the guess alone spends 5 M positions).
    if let Some(guess) = args.guess {
        solver.set_first_guess(&pos, guess);
    }
    let quick = pool.install(|| solver.solve_within(&pos, QUICK_SOLVE_NODES));
    let (value, stats) = match quick {
        Some(found) => found,
        None => {
            eprintln!(
                "not settled by the search alone within {QUICK_SOLVE_NODES} positions ({:.2} s)",
                start.elapsed().as_secs_f64()
            );
            if !args.no_egdb && pos.seeds_in_pits() > EGDB_WORTH_BUILDING_ABOVE {
                match &egdb {
                    None => {
                        egdb = missing_database(args, &pos, &dir)?.map(std::sync::Arc::new);
                        if let Some(db) = &egdb {
                            announce(db);
                            // The table's default size depends on the database's.
                            solver = new_solver(&egdb);
                        }
                    }
                    Some(db) => suggest_larger(args, &pos, &dir, db.max_seeds()),
                }
            }
            let guess = args.guess.or_else(|| {
                (pos.seeds_in_pits() > EGDB_WORTH_BUILDING_ABOVE).then(|| {
                    let guessed = Instant::now();
                    let guess = first_guess(&pos, args.rules.rules, GUESS_NODES);
                    eprintln!(
                        "first guess: {guess} (store-difference searches, {:.1} s)",
                        guessed.elapsed().as_secs_f64()
                    );
                    guess
                })
            });
            if let Some(guess) = guess {
                solver.set_first_guess(&pos, guess);
            }
            pool.install(|| solver.solve_observed(&pos, &mut |r| report(r)))
        }
    };
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

/// The database `--egdb-build auto` builds for `pos` when the folder has none, and the one a
/// smaller database in the folder is measured against.
fn wanted_database(args: &SolveArgs, pos: &Position) -> Option<crate::search::egdb::EgdbIndex> {
    let max_mb = args
        .egdb_mb
        .unwrap_or_else(|| default_egdb_mb(pos.seeds_in_pits(), available_mib()));
    super::egdb::index_within(pos.pits(), max_mb << 20, pos.seeds_in_pits())
}

/// The folder's database covers fewer seeds than the one `solve` would build: say so (a
/// database built on purpose is never replaced behind the user's back). Through the 18-seed
/// database that a Kalah(6,4) solve leaves behind, Kalah(6,5)'s first probe alone takes more
/// than twice as long as through the 24-seed one (docs/explanation/solver.md#why-these-defaults).
fn suggest_larger(args: &SolveArgs, pos: &Position, dir: &std::path::Path, have: u32) {
    let rules = args.rules.rules;
    if let Some(index) = wanted_database(args, pos).filter(|index| index.max_seeds() > have) {
        eprintln!(
            "the largest endgame database for {}-pit boards ({rules}) in {} covers {have} seeds: {} would make this solve faster",
            pos.pits(),
            dir.display(),
            build_command(&index, rules)
        );
    }
}

/// The `egdb build` command of the database `index` describes, with its size.
fn build_command(index: &crate::search::egdb::EgdbIndex, rules: crate::game::Rules) -> String {
    format!(
        "`kalah-tuner egdb build --pits {} --seeds {} --rules {rules}` ({:.0} MiB)",
        index.pits(),
        index.max_seeds(),
        index.entries() as f64 / (1u64 << 20) as f64
    )
}

/// No database for the board and rules in `dir`: build the one `--egdb-build auto` asks for
/// and open it, or say how to build one.
fn missing_database(
    args: &SolveArgs,
    pos: &Position,
    dir: &std::path::Path,
) -> Result<Option<Egdb>> {
    let rules = args.rules.rules;
    let Some(index) = wanted_database(args, pos) else {
        return Ok(None);
    };
    if args.egdb_build == EgdbBuild::Never {
        eprintln!(
            "no endgame database for {}-pit boards ({rules}) in {}: {} would make this solve much faster",
            pos.pits(),
            dir.display(),
            build_command(&index, rules)
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

pub(crate) fn run_move(args: &MoveArgs) -> Result<()> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::egdb::index_within;

    #[test]
    fn defaults_follow_the_seeds_in_play_and_the_memory_available() {
        let seeds = |mb: u64, seeds_in_pits: u32| {
            index_within(6, mb << 20, seeds_in_pits).map(|index| index.max_seeds())
        };
        // Kalah(6,4): the 18-seed database and the 400 MiB table, whatever the memory.
        assert_eq!(seeds(default_egdb_mb(48, Some(24 << 10)), 48), Some(18));
        assert_eq!(default_table_mb(48, 86 << 20, Some(24 << 10)), 400);
        // Kalah(6,5) on 24 GiB: the 26-seed database and half of the rest for the table.
        let mb = default_egdb_mb(60, Some(24 << 10));
        assert_eq!(seeds(mb, 60), Some(26));
        assert_eq!(
            default_table_mb(60, 2582 << 20, Some(24 << 10)),
            (24_576 - 2582) / 2
        );
        // On 2 GiB the database takes at most half the memory, and the table never shrinks
        // below the small default; where memory is unknown, the wanted sizes stand.
        assert!(default_egdb_mb(60, Some(2 << 10)) <= 1 << 10);
        assert_eq!(default_table_mb(60, 3 << 29, Some(2 << 10)), 400);
        assert_eq!(default_egdb_mb(60, None), 2600);
        assert_eq!(default_table_mb(60, 0, None), 400);
    }
}
