//! Endgame databases: every entry checked against the solver without a database on random
//! positions with few seeds, the shared start tables and exact values solved through the
//! database, and the file format's checks.

mod common;

use std::collections::HashMap;
use std::sync::Arc;

use kalah_tuner::game::{Position, Rules, Side};
use kalah_tuner::search::egdb::{Egdb, EgdbError, Quiet};
use kalah_tuner::search::Solver;
use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64;

/// Start positions a test solves through a database it builds in a second or two: Kalah(5,5)
/// and (5,6) still take minutes with those, and Kalah(6,4) (48 seeds) 90 s with a 16-seed
/// database; `six_four_from_nothing` and docs/explanation/solver.md measure the full-scale solves.
fn affordable(pits: usize, seeds: u32) -> bool {
    seeds <= if pits >= 6 { 40 } else { 48 }
}

/// A random position of `pits` pits with `seeds` seeds spread over the pits at random, random
/// stores and a random side to move.
fn random_position(rng: &mut Pcg64, pits: usize, seeds: u32) -> Position {
    let mut cells = vec![0u32; 2 * pits];
    for _ in 0..seeds {
        cells[rng.random_range(0..2 * pits)] += 1;
    }
    let side = if rng.random_bool(0.5) {
        Side::South
    } else {
        Side::North
    };
    Position::new(
        &cells[..pits],
        rng.random_range(0..20),
        &cells[pits..],
        rng.random_range(0..20),
        side,
    )
    .unwrap()
}

#[test]
fn entries_match_the_solver_without_a_database() {
    let mut rng = Pcg64::seed_from_u64(20);
    for rules in [Rules::Standard, Rules::EmptyCapture] {
        for (pits, max_seeds) in [(2, 16), (3, 14), (6, 12), (7, 9)] {
            let db = Egdb::build(pits, max_seeds, rules, &Quiet).unwrap();
            assert_eq!(db.max_seeds(), max_seeds);
            let mut solver = Solver::with_default_table(rules);
            for _ in 0..300 {
                let seeds = rng.random_range(0..=max_seeds);
                let pos = random_position(&mut rng, pits, seeds);
                let (exact, _) = solver.solve(&pos);
                assert_eq!(
                    db.value(&pos),
                    Some(exact),
                    "{pos} ({rules}) from Kalah({pits}) up to {max_seeds} seeds"
                );
            }
            // Above its seeds, on another board or under the pie rule it does not answer.
            let more = random_position(&mut rng, pits, max_seeds + 1);
            assert_eq!(db.value(&more), None);
            let other = random_position(&mut rng, pits + 1, 2);
            assert_eq!(db.value(&other), None);
            let pie = Position::start(pits, 1).unwrap().with_pie(true);
            if pie.seeds_in_pits() <= max_seeds {
                assert_eq!(db.value(&pie), None, "a swap offer is not in the database");
            }
        }
    }
}

/// One database per board and rules, as large as a test can afford (about 30 million
/// entries, a second or two to build).
fn test_database(pits: usize, rules: Rules) -> Arc<Egdb> {
    let seeds = match pits {
        1..=2 => 24,
        3 => 30,
        4 => 24,
        5 => 20,
        6 => 16,
        _ => 12,
    };
    Arc::new(Egdb::build(pits, seeds, rules, &Quiet).unwrap())
}

#[test]
fn start_tables_through_the_database() {
    let mut databases: HashMap<(usize, Rules), Arc<Egdb>> = HashMap::new();
    let mut checked = 0;
    for table in common::start_tables() {
        for &(m, n, expected) in &table.entries {
            let start = Position::start(m, n).unwrap();
            if !affordable(m, start.total_seeds()) {
                continue;
            }
            let db = databases
                .entry((m, table.rules))
                .or_insert_with(|| test_database(m, table.rules))
                .clone();
            let mut solver = Solver::with_default_table(table.rules);
            solver.set_egdb(db.clone());
            let (value, _) = solver.solve(&start);
            assert_eq!(value, expected, "Kalah({m},{n}) {}", table.rules);
            if start.seeds_in_pits() <= db.max_seeds() {
                assert_eq!(db.value(&start), Some(expected), "Kalah({m},{n}) entry");
            }
            checked += 1;
        }
    }
    assert!(checked >= 40, "only {checked} table entries checked");
}

#[test]
fn shared_exact_values_through_the_database() {
    let mut databases: HashMap<(usize, Rules), Arc<Egdb>> = HashMap::new();
    let mut checked = 0;
    for v in common::vectors() {
        let Some(expected) = v.value else { continue };
        let pits = v.position.pits();
        let db = databases
            .entry((pits, v.rules))
            .or_insert_with(|| Arc::new(Egdb::build(pits, 12, v.rules, &Quiet).unwrap()))
            .clone();
        let mut solver = Solver::with_default_table(v.rules);
        solver.set_egdb(db);
        assert_eq!(
            solver.solve(&v.position).0,
            expected,
            "{}:{} {}",
            v.file,
            v.line,
            v.kpn
        );
        // The database also answers inside best_moves, which must keep the same moves.
        let (value, moves) = solver.best_moves(&v.position);
        assert_eq!(value, expected);
        let mut plain = Solver::with_default_table(v.rules);
        assert_eq!(plain.best_moves(&v.position).1, moves, "{}", v.kpn);
        checked += 1;
    }
    assert!(checked >= 20, "only {checked} exact values checked");
}

#[test]
fn files_round_trip_and_damage_is_caught() {
    let dir = std::env::temp_dir().join(format!("kalah-egdb-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let built = Egdb::build(4, 14, Rules::Standard, &Quiet).unwrap();
    let path = dir.join(Egdb::file_name(4, 14, Rules::Standard));
    built.write(&path).unwrap();
    let smaller = Egdb::build(4, 6, Rules::Standard, &Quiet).unwrap();
    smaller
        .write(&dir.join(Egdb::file_name(4, 6, Rules::Standard)))
        .unwrap();

    let opened = Egdb::open_largest(&dir, 4, Rules::Standard)
        .unwrap()
        .expect("a database");
    assert_eq!(
        (opened.pits(), opened.max_seeds(), opened.rules()),
        (4, 14, Rules::Standard)
    );
    assert!(Egdb::open_largest(&dir, 4, Rules::EmptyCapture)
        .unwrap()
        .is_none());
    let mut rng = Pcg64::seed_from_u64(7);
    for _ in 0..500 {
        let seeds = rng.random_range(0..=14);
        let pos = random_position(&mut rng, 4, seeds);
        assert_eq!(opened.value(&pos), built.value(&pos));
    }

    // One flipped entry fails the checksum; a cut file fails the size check.
    let mut bytes = std::fs::read(&path).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    let damaged = dir.join("damaged.egdb");
    std::fs::write(&damaged, &bytes).unwrap();
    let err = Egdb::open(&damaged).unwrap_err();
    assert!(
        matches!(err, EgdbError::Corrupt { .. }) && err.to_string().contains("checksum"),
        "{err}"
    );
    std::fs::write(&damaged, &bytes[..bytes.len() - 10]).unwrap();
    assert!(matches!(
        Egdb::open(&damaged),
        Err(EgdbError::Corrupt { .. })
    ));
    std::fs::write(&damaged, b"not a database").unwrap();
    assert!(matches!(
        Egdb::open(&damaged),
        Err(EgdbError::Corrupt { .. })
    ));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Kalah(6,4) under both rule sets from nothing: databases up to 20 seeds built, then the
/// start solved through them (+10 with empty captures, +8 with standard rules). About 3 min on
/// two cores: `cargo test --release --test egdb -- --ignored`.
#[test]
#[ignore]
fn six_four_from_nothing() {
    for (rules, expected) in [(Rules::EmptyCapture, 10), (Rules::Standard, 8)] {
        let db = Arc::new(Egdb::build(6, 20, rules, &Quiet).unwrap());
        let mut solver = Solver::with_default_table(rules);
        solver.set_egdb(db);
        let (value, _) = solver.solve(&Position::start(6, 4).unwrap());
        assert_eq!(value, expected, "Kalah(6,4) {rules}");
    }
}

/// Agents with `"egdb": true` read the database of the cache folder: where it covers a
/// position, a depth-1 `minimax` and a `perfect` agent that may not solve anything itself
/// both play only perfect moves.
#[test]
fn agents_play_endgames_perfectly_from_the_database() {
    use kalah_tuner::agents::{rng_from_seed, AgentSpec};
    let dir = std::env::temp_dir().join(format!("kalah-egdb-agents-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let rules = Rules::Standard;
    Egdb::build(6, 12, rules, &Quiet)
        .unwrap()
        .write(&dir.join(Egdb::file_name(6, 12, rules)))
        .unwrap();
    // The only test of this binary that reads the cache folder.
    std::env::set_var("KALAH_TUNER_EGDB_DIR", &dir);

    let minimax = AgentSpec::parse(r#"{"kind": "minimax", "depth": 1, "egdb": true}"#).unwrap();
    let perfect = AgentSpec::parse(
        r#"{"kind": "perfect", "max_seeds": 0, "fallback_depth": 1, "egdb": true}"#,
    )
    .unwrap();
    let mut agents = [minimax.build(rules).unwrap(), perfect.build(rules).unwrap()];
    let mut solver = Solver::with_default_table(rules);
    let mut rng = Pcg64::seed_from_u64(11);
    let mut game_rng = rng_from_seed(1);
    let mut checked = 0;
    while checked < 200 {
        let seeds = rng.random_range(2..=12);
        let pos = random_position(&mut rng, 6, seeds);
        if pos.is_game_over() {
            continue;
        }
        let (_, perfect_moves) = solver.best_moves(&pos);
        for agent in agents.iter_mut() {
            let mv = agent.choose(&pos, &mut game_rng).mv;
            assert!(
                perfect_moves.contains(&mv),
                "{pos}: {mv} not in {perfect_moves:?}"
            );
        }
        checked += 1;
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The agreement yardstick's positions and exact values are the same with the database, and
/// only with one may positions have more than 26 seeds.
#[test]
fn agreement_sets_are_the_same_through_the_database() {
    use kalah_tuner::matches::agreement::{
        solved_positions, solved_positions_with, AgreementSetup,
    };
    let setup = AgreementSetup {
        positions: 60,
        max_seeds: 16,
        seed: 3,
        ..AgreementSetup::default()
    };
    let db = Arc::new(Egdb::build(6, 12, setup.rules, &Quiet).unwrap());
    assert_eq!(
        solved_positions(&setup).unwrap(),
        solved_positions_with(&setup, Some(db.clone())).unwrap()
    );
    let deeper = AgreementSetup {
        max_seeds: 30,
        positions: 5,
        ..setup
    };
    assert!(solved_positions(&deeper).is_err());
    assert_eq!(solved_positions_with(&deeper, Some(db)).unwrap().len(), 5);
}

/// A database file damaged under the process that loaded it for its agents changes no
/// answer and cannot crash it: agents read a verified private copy. The file mapped as the
/// command line maps it shows what that protects against: overwritten entries change its
/// answers (and a truncated one would kill the process with SIGBUS, so it is dropped first).
/// A damaged file is refused when it is loaded.
#[test]
fn a_database_damaged_under_its_reader_changes_nothing() {
    use kalah_tuner::agents::endgame::open_private;
    use std::io::{Seek, SeekFrom, Write};
    let dir = std::env::temp_dir().join(format!("kalah-egdb-damage-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let rules = Rules::Standard;
    let path = dir.join(Egdb::file_name(4, 14, rules));
    Egdb::build(4, 14, rules, &Quiet)
        .unwrap()
        .write(&path)
        .unwrap();
    let mut rng = Pcg64::seed_from_u64(35);
    let positions: Vec<Position> = (0..400)
        .map(|_| {
            let seeds = rng.random_range(1..=14);
            random_position(&mut rng, 4, seeds)
        })
        .collect();
    let values = |db: &Egdb| positions.iter().map(|p| db.value(p)).collect::<Vec<_>>();
    let private = open_private(&path).unwrap();
    let mapped = Egdb::open(&path).unwrap();
    let before = values(&private);
    assert!(before.iter().all(Option::is_some));
    assert_eq!(values(&mapped), before);

    // Every entry overwritten in place (the same file, not a new one renamed over it).
    let len = std::fs::metadata(&path).unwrap().len();
    let mut file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    file.seek(SeekFrom::Start(64)).unwrap();
    file.write_all(&vec![0x05u8; (len - 64) as usize]).unwrap();
    file.sync_all().unwrap();
    assert_ne!(values(&mapped), before, "the mapped file shows the damage");
    assert_eq!(values(&private), before, "the private copy does not");
    drop(mapped);
    match open_private(&path) {
        Err(EgdbError::Corrupt { reason, .. }) => assert!(reason.contains("checksum"), "{reason}"),
        other => panic!("an overwritten database was loaded: {other:?}"),
    }

    // Truncated to a third: reading every entry again neither crashes nor changes anything.
    file.set_len(len / 3).unwrap();
    drop(file);
    assert_eq!(values(&private), before);
    match open_private(&path) {
        Err(EgdbError::Corrupt { reason, .. }) => assert!(reason.contains("bytes"), "{reason}"),
        other => panic!("a truncated database was loaded: {other:?}"),
    }
    // Gone altogether: the same.
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(values(&private), before);
}
