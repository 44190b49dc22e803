//! `kalah-tuner bench`: single-threaded speed of move generation, search and self-play, so
//! that performance claims come from a command anyone can rerun.

use std::time::{Duration, Instant};

use anyhow::Result;
use clap::Args;
use rand::RngExt;

use super::bench_seeds::BenchSeeds;
use crate::agents::{rng_from_seed, AgentSpec};
use crate::eval::StoreDiff;
use crate::game::{perft, Position, Rules};
use crate::matches::Pairing;
use crate::search::{AlphaBeta, Solver};

#[derive(Args, Debug, Clone)]
pub(crate) struct BenchArgs {
    /// Smaller workloads (perft depth 9, minimax to depth 6, fewer games): a smoke test
    #[arg(long)]
    pub quick: bool,
    /// Run one fixed workload once and print its result instead of timing anything: for
    /// counting instructions and branch misses under valgrind (benches/count-guard.sh), which
    /// do not depend on the host
    #[arg(long, value_enum, conflicts_with = "quick")]
    pub workload: Option<Workload>,
    #[command(flatten)]
    pub cost: super::cost_bench::CostArgs,
}

/// The deterministic workloads of `bench --workload`: each exercises one hot path the same
/// way on every run and every host, on one thread.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Workload {
    /// perft(9) from the Kalah(6,4) start: move generation and sowing
    Perft,
    /// Store-difference alpha-beta to depth 6 from the Kalah(6,4) start and from every
    /// position two sowings into the game, a fresh searcher each: the search's hot loop
    Minimax,
    /// The 8-seed Kalah(6,4) endgame database built in memory, then every position of a
    /// fixed random walk that it covers looked up: the database's index and probe
    Egdb,
}

fn best_of<T>(runs: usize, mut f: impl FnMut() -> T) -> (T, Duration) {
    let mut best = Duration::MAX;
    let mut out = None;
    for _ in 0..runs {
        let start = Instant::now();
        let value = f();
        best = best.min(start.elapsed());
        out = Some(value);
    }
    (out.expect("at least one run"), best)
}

pub(crate) fn run(args: &BenchArgs) -> Result<()> {
    if let Some(path) = &args.cost.cost_runs {
        return super::run_cost_bench::run(
            path,
            args.cost.cost_measure,
            args.cost.cost_select.as_deref(),
        );
    }
    if args.cost.cost || args.cost.cost_from.is_some() {
        return super::cost_bench::run(&args.cost);
    }
    if let Some(workload) = args.workload {
        return run_workload(workload);
    }
    let start = Position::start(6, 4)?;
    let rules = Rules::Standard;
    println!("kalah-tuner bench: one thread, Kalah(6,4), standard rules");

    let depth = if args.quick { 9 } else { 11 };
    let (count, t) = best_of(3, || perft(&start, depth, rules));
    println!(
        "perft({depth}) from the start: {count} paths in {:.3} s ({:.1} M paths/s)",
        t.as_secs_f64(),
        count as f64 / t.as_secs_f64() / 1e6
    );

    let depths: &[u32] = if args.quick { &[4, 6] } else { &[4, 6, 8] };
    for &d in depths {
        let eval = StoreDiff;
        let runs = if d >= 8 { 5 } else { 50 };
        let (result, t) = best_of(runs, || {
            AlphaBeta::new(&eval, rules).search_depth(&start, d)
        });
        println!(
            "minimax depth {d} from the start: {:.3} ms per move, {} nodes, best moves {:?}",
            t.as_secs_f64() * 1e3,
            result.nodes,
            result.best_moves
        );
    }

    // MCTS at Hunter's budget from the start: the issue asks for under 20 ms a move.
    let mut mcts = AgentSpec::parse("mcts:4000")?.build(rules)?;
    let runs = if args.quick { 5 } else { 30 };
    let mut total = Duration::ZERO;
    let mut seed = 0;
    let (decision, t) = best_of(runs, || {
        seed += 1;
        let start_time = Instant::now();
        let d = mcts.choose(&start, &mut rng_from_seed(seed));
        total += start_time.elapsed();
        d
    });
    println!(
        "mcts:4000 from the start: {:.2} ms per move best, {:.2} ms mean of {runs}, {} iterations, move {}",
        t.as_secs_f64() * 1e3,
        total.as_secs_f64() * 1e3 / runs as f64,
        decision.playouts,
        decision.mv
    );

    self_play(args, start, rules)?;

    // An endgame with 22 seeds in the pits, reached by a fixed sequence of moves.
    let endgame = crate::game::parse_kpn("2,0,3,1,4,0/14/1,2,0,5,3,1/12/S")?;
    let (value, t) = best_of(1, || Solver::with_default_table(rules).solve(&endgame).0);
    println!(
        "solve {endgame} ({} seeds in pits): value {value} in {:.3} s",
        endgame.seeds_in_pits(),
        t.as_secs_f64()
    );
    Ok(())
}

/// Whole games of the published hunter10 player against itself from two-ply openings.
fn self_play(args: &BenchArgs, start: Position, rules: Rules) -> Result<()> {
    let games = if args.quick { 20 } else { 200 };
    let spec = AgentSpec::parse("heuristic:hunter10:published:4")?;
    let t = Instant::now();
    let mut plies = 0;
    let pairing = Pairing {
        start,
        rules,
        opening_plies: 2,
        seeds: BenchSeeds,
    };
    for g in 0..games {
        let mut south = spec.build(rules)?;
        let mut north = spec.build(rules)?;
        plies += pairing
            .play(&mut *south, &mut *north, g, true)
            .record
            .plies
            .len();
    }
    let secs = t.elapsed().as_secs_f64();
    println!(
        "heuristic:hunter10:published:4 self-play: {games} games in {secs:.2} s ({:.1} games/s, {:.0} plies/game)",
        games as f64 / secs,
        plies as f64 / games as f64
    );
    Ok(())
}

/// One run of `workload` on one thread, printing a line that depends only on the code's
/// results (so that two builds can be checked to have done the same work).
fn run_workload(workload: Workload) -> Result<()> {
    let start = Position::start(6, 4)?;
    let rules = Rules::Standard;
    match workload {
        Workload::Perft => println!("perft(9): {}", perft(&start, 9, rules)),
        Workload::Minimax => {
            let mut roots = vec![start];
            for first in start.legal_moves() {
                let mut after_one = start;
                after_one.play_unchecked(first, rules);
                for second in after_one.legal_moves() {
                    let mut after_two = after_one;
                    after_two.play_unchecked(second, rules);
                    if !after_two.is_game_over() {
                        roots.push(after_two);
                    }
                }
            }
            let (mut nodes, mut values) = (0, 0);
            for root in &roots {
                let result = AlphaBeta::new(&StoreDiff, rules).search_depth(root, 6);
                nodes += result.nodes;
                values += result.value;
            }
            println!(
                "minimax depth 6 from {} positions: {nodes} nodes, values summing to {values}",
                roots.len()
            );
        }
        Workload::Egdb => {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build()?;
            let db = pool
                .install(|| crate::search::Egdb::build(6, 8, rules, &crate::search::egdb::Quiet))?;
            // A fixed walk of random games from the Kalah(6,4) start: their late positions
            // fall within 8 seeds.
            let mut rng = rng_from_seed(8);
            let (mut found, mut sum) = (0u64, 0i64);
            for _ in 0..2000 {
                let mut pos = start;
                while !pos.is_game_over() {
                    if let Some(gain) = db.gain(&pos) {
                        found += 1;
                        sum += gain as i64;
                    }
                    let moves = pos.legal_moves().to_vec();
                    let mv = moves[rng.random_range(0..moves.len())];
                    pos.play_unchecked(mv, rules);
                }
            }
            println!(
                "egdb: {} entries, {found} positions found, gains summing to {sum}",
                db.entries()
            );
        }
    }
    Ok(())
}
