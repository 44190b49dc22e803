//! The exact solver against the shared exact values and the start-position tables.

mod common;

use kalah_tuner::game::Position;
use kalah_tuner::search::Solver;

#[test]
fn every_shared_exact_value_is_reproduced() {
    let mut checked = 0;
    for v in common::vectors() {
        if let Some(expected) = v.value {
            let mut solver = Solver::for_seeds(v.rules, v.position.seeds_in_pits());
            let (value, _) = solver.solve(&v.position);
            assert_eq!(
                value, expected,
                "{}:{} {} ({})",
                v.file, v.line, v.kpn, v.rules
            );
            checked += 1;
        }
    }
    assert!(
        checked >= 20,
        "only {checked} exact values in the shared vectors"
    );
}

#[test]
fn start_tables_small() {
    for table in common::start_tables() {
        for &(m, n, expected) in &table.entries {
            if m as u32 * n > 15 {
                continue;
            }
            let start = Position::start(m, n).unwrap();
            let t = std::time::Instant::now();
            let mut solver = Solver::for_seeds(table.rules, start.seeds_in_pits());
            let (value, stats) = solver.solve(&start);
            eprintln!(
                "{} ({m},{n}) = {value} nodes {} {:?}",
                table.rules,
                stats.nodes,
                t.elapsed()
            );
            assert_eq!(value, expected, "Kalah({m},{n}) {}", table.rules);
        }
    }
}

#[test]
#[ignore]
fn timing_probe() {
    use kalah_tuner::game::Rules;
    for (m, n) in [(4usize, 4u32), (6, 3), (5, 4), (4, 5), (4, 6), (5, 5)] {
        let start = Position::start(m, n).unwrap();
        let t = std::time::Instant::now();
        let mut solver = Solver::for_seeds(Rules::EmptyCapture, start.seeds_in_pits());
        let (value, stats) = solver.solve(&start);
        eprintln!(
            "ec ({m},{n}) = {value} nodes {} {:?}",
            stats.nodes,
            t.elapsed()
        );
    }
}

#[test]
#[ignore]
fn timing_22_seeds() {
    use kalah_tuner::agents::{rng_from_seed, Agent, RandomAgent};
    use kalah_tuner::game::Rules;
    let mut worst = 0.0f64;
    for seed in 0..40u64 {
        let mut rng = rng_from_seed(seed);
        let mut pos = Position::start(6, 4).unwrap();
        while pos.seeds_in_pits() > 22 && !pos.is_game_over() {
            let mv = RandomAgent.choose(&pos, &mut rng).mv;
            pos.play(mv, Rules::Standard).unwrap();
        }
        if pos.is_game_over() {
            continue;
        }
        for rules in [Rules::Standard, Rules::EmptyCapture] {
            let t = std::time::Instant::now();
            let (v, stats) = Solver::with_default_table(rules).solve(&pos);
            let s = t.elapsed().as_secs_f64();
            worst = worst.max(s);
            eprintln!(
                "{pos} {rules} seeds {} value {v} nodes {} {s:.3}s",
                pos.seeds_in_pits(),
                stats.nodes
            );
        }
    }
    for kpn in [
        "2,2,2,2,2,1/13/2,2,2,2,2,1/13/S",
        "4,4,3,0,0,0/13/0,0,0,3,4,4/13/S",
        "1,2,3,4,1,0/10/0,1,4,3,2,1/16/N",
        "0,0,0,0,0,22/26/1,0,0,0,0,0/0/N",
    ] {
        let pos = kalah_tuner::game::parse_kpn(kpn).unwrap();
        let t = std::time::Instant::now();
        let (v, stats) = Solver::with_default_table(Rules::Standard).solve(&pos);
        eprintln!(
            "{pos} value {v} nodes {} {:.3}s",
            stats.nodes,
            t.elapsed().as_secs_f64()
        );
    }
    eprintln!("worst {worst:.3}s");
}
