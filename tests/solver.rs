//! The exact solver against the shared exact values and the start-position tables.

mod common;

use kalah_tuner::game::Position;
use kalah_tuner::search::Solver;

/// Start positions with more seeds than this take minutes to hours to solve; they run in
/// `start_tables_large` (ignored by default: `cargo test --release -- --ignored`).
const CI_MAX_SEEDS: u32 = 40;

#[test]
fn every_shared_exact_value_is_reproduced() {
    let mut checked = 0;
    for v in common::vectors() {
        if let Some(expected) = v.value {
            let mut solver = Solver::with_default_table(v.rules);
            let (value, _) = solver.solve(&v.position);
            assert_eq!(
                value, expected,
                "{}:{} {} ({})",
                v.file, v.line, v.kpn, v.rules
            );
            // Exactly the moves whose exact value equals the position's are its best moves.
            if !v.position.is_game_over() {
                let values = solver.solve_moves(&v.position);
                let exact: Vec<usize> = values
                    .iter()
                    .filter(|&&(_, x)| x == expected)
                    .map(|&(m, _)| m)
                    .collect();
                assert!(values.iter().all(|&(_, x)| x <= expected));
                assert_eq!(
                    solver.best_moves(&v.position),
                    (expected, exact),
                    "{}:{}",
                    v.file,
                    v.line
                );
            }
            checked += 1;
        }
    }
    assert!(
        checked >= 20,
        "only {checked} exact values in the shared vectors"
    );
}

fn check_start_tables(select: impl Fn(u32) -> bool) -> usize {
    let tables = common::start_tables();
    assert_eq!(
        tables.len(),
        2,
        "expected the standard and the empty-capture tables"
    );
    let mut checked = 0;
    for table in tables {
        for &(m, n, expected) in &table.entries {
            let start = Position::start(m, n).unwrap();
            if !select(start.total_seeds()) {
                continue;
            }
            let t = std::time::Instant::now();
            let (value, stats) = Solver::with_default_table(table.rules).solve(&start);
            eprintln!(
                "Kalah({m},{n}) {}: {value} ({} nodes, {:.2} s)",
                table.rules,
                stats.nodes,
                t.elapsed().as_secs_f64()
            );
            assert_eq!(value, expected, "Kalah({m},{n}) {}", table.rules);
            checked += 1;
        }
    }
    checked
}

#[test]
fn start_tables_up_to_40_seeds() {
    let checked = check_start_tables(|seeds| seeds <= CI_MAX_SEEDS);
    assert!(checked >= 35, "only {checked} table entries checked");
}

#[test]
#[ignore = "hours of CPU: Kalah(6,4) and beyond; run with --ignored"]
fn start_tables_large() {
    check_start_tables(|seeds| seeds > CI_MAX_SEEDS);
}

#[test]
fn solves_endgames_with_22_seeds_on_6_and_8_pit_boards() {
    use kalah_tuner::agents::{rng_from_seed, Agent, RandomAgent};
    use kalah_tuner::game::Rules;
    // Positions of random games at the moment 22 or fewer seeds are left, on several boards.
    for (m, n) in [(6usize, 4u32), (8, 3)] {
        for seed in 0..3u64 {
            let mut rng = rng_from_seed(seed);
            let mut pos = Position::start(m, n).unwrap();
            while pos.seeds_in_pits() > 22 && !pos.is_game_over() {
                let mv = RandomAgent.choose(&pos, &mut rng).mv;
                pos.play(mv, Rules::Standard).unwrap();
            }
            let mut solver = Solver::with_default_table(Rules::Standard);
            let t = std::time::Instant::now();
            let (value, _) = solver.solve(&pos);
            eprintln!("{pos}: {value} in {:.2} s", t.elapsed().as_secs_f64());
            // The value is a final margin: same parity as the seeds, within the total.
            assert!(value.unsigned_abs() <= pos.total_seeds());
            assert_eq!((value + pos.total_seeds() as i32) % 2, 0);
            if !pos.is_game_over() {
                let (again, best) = solver.best_moves(&pos);
                assert_eq!(again, value);
                assert!(
                    !best.is_empty() && best.iter().all(|&mv| pos.is_legal(mv)),
                    "{pos}"
                );
            }
        }
    }
}

/// The parallel search (young brothers wait on a shared table) changes node counts and
/// times, never values or best moves.
#[test]
fn two_threads_find_the_same_values_and_best_moves() {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .unwrap();
    let mut checked = 0;
    for table in common::start_tables() {
        for &(m, n, expected) in &table.entries {
            let start = Position::start(m, n).unwrap();
            if !(24..=36).contains(&start.total_seeds()) {
                continue;
            }
            let mut serial = Solver::with_default_table(table.rules);
            let mut parallel = Solver::with_default_table(table.rules);
            parallel.set_parallel(true);
            let (value, _) = pool.install(|| parallel.solve(&start));
            assert_eq!(value, expected, "Kalah({m},{n}) {}", table.rules);
            assert_eq!(
                pool.install(|| parallel.best_moves(&start)),
                serial.best_moves(&start),
                "Kalah({m},{n}) {}",
                table.rules
            );
            checked += 1;
        }
    }
    assert!(checked >= 10, "only {checked} table entries checked");
    // A node cap stops every thread, and the call says so.
    let start = Position::start(6, 4).unwrap();
    let mut capped = Solver::with_default_table(kalah_tuner::game::Rules::Standard);
    capped.set_parallel(true);
    assert_eq!(
        pool.install(|| capped.best_moves_within(&start, 100_000)),
        None
    );
}

/// The busiest thread's positions are all the work on one thread; when threads share a
/// solve, each searches part of it, so the busiest does less than all of them together.
#[test]
fn busiest_thread_is_counted_as_documented() {
    let start = Position::start(5, 4).unwrap();
    let mut serial = Solver::with_default_table(kalah_tuner::game::Rules::Standard);
    let (value, stats) = serial.solve(&start);
    assert_eq!(stats.busiest, stats.nodes);

    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(4)
        .build()
        .unwrap();
    let mut parallel = Solver::with_default_table(kalah_tuner::game::Rules::Standard);
    parallel.set_parallel(true);
    let (again, stats) = pool.install(|| parallel.solve(&start));
    assert_eq!(again, value);
    assert!(
        stats.busiest > 0 && stats.busiest < stats.nodes,
        "{stats:?}"
    );
}
