//! A first guess of a position's exact value, for the solver's MTD(f) probes to start from.
//!
//! MTD(f) climbs to the value one null-window probe at a time, and on Kalah(6,5) the probes
//! far below the value cost most. Through the 26-seed database of standard rules on two cores
//! (2026-11-28): started at 0, the solve proved "at least 0" and "at least 2" in 632 of its
//! 1,116 s; started at 8 (one store-difference depth's value) it was done in 532 s; at 10, the
//! value and this module's guess, in 420 s (docs/explanation/solver.md#the-first-guess). Store-difference
//! alpha-beta searches of a few million positions land within a probe of the value on the
//! 6-pit starts measured, so the guess is worth its half second.

use super::AlphaBeta;
use crate::eval::{terminal_margin, StoreDiff, SCALE};
use crate::game::{Position, Rules};

/// Positions the guessing searches visit before no deeper one starts: depth 12 and 13 from
/// the 6-pit starts, about half a second on one core.
pub(crate) const GUESS_NODES: u64 = 5_000_000;

/// Deepest the guessing search goes: an endgame small enough to be searched to its end within
/// the budget is then guessed exactly; the budget stops it first on any real board.
const GUESS_MAX_DEPTH: u32 = 40;

/// A guess of the exact value of `pos` (stores included, as [`super::Solver::solve`] returns
/// it): store-difference alpha-beta searches one turn deeper each until they have visited
/// `max_nodes` positions, the mean of the last two values, rounded up to the parity every
/// final margin of `pos` has. Depends only on its arguments, never on time.
///
/// The mean of two depths because the side that moves last before the horizon gains: from the
/// start of Kalah(6,5) standard (value 10) depth 12 says 8, depth 13 says 11, depth 14 says 8
/// again. No endgame database: alpha-beta scores the positions a database covers as finished
/// games, above every store difference, and that mix guessed 14 there.
pub(crate) fn first_guess(pos: &Position, rules: Rules, max_nodes: u64) -> i32 {
    if pos.is_game_over() {
        let me = pos.side_to_move();
        return pos.seeds_on_side(me) as i32 - pos.seeds_on_side(me.opponent()) as i32;
    }
    let eval = StoreDiff;
    let mut search = AlphaBeta::new(&eval, rules);
    let mut spent = 0;
    let mut values = Vec::new();
    for depth in 1..=GUESS_MAX_DEPTH {
        let result = search.search_depth(pos, depth);
        spent += result.nodes;
        let score = result.value;
        values.push(terminal_margin(score).unwrap_or(score / SCALE as i64));
        if spent >= max_nodes {
            break;
        }
    }
    let last_two = &values[values.len().saturating_sub(2)..];
    let sum: i64 = last_two.iter().sum();
    let mean = sum.div_euclid(last_two.len() as i64) as i32;
    let total = pos.total_seeds() as i32;
    let margin = mean.clamp(-total, total);
    // Both stores together hold every seed at the end, so the margin has the total's parity.
    if (margin - total).rem_euclid(2) == 0 {
        margin
    } else {
        margin + 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::parse_kpn;

    #[test]
    fn the_guess_has_the_parity_of_the_seeds_and_stays_within_them() {
        for kpn in [
            "4,4,4,4,4,4/0/4,4,4,4,4,4/0/S",
            "3,0,0,0,0,1/10/0,0,2,0,0,1/7/N",
            "0,0,0,0,0,0/20/1,2,0,0,0,1/14/S",
        ] {
            let pos = parse_kpn(kpn).expect("a valid position");
            let guess = first_guess(&pos, Rules::Standard, 200_000);
            let total = pos.total_seeds() as i32;
            assert_eq!((guess - total).rem_euclid(2), 0, "{kpn}: {guess}");
            assert!(guess.abs() <= total, "{kpn}: {guess}");
        }
    }

    #[test]
    fn no_first_guess_changes_the_solved_value() {
        let pos = parse_kpn("2,0,3,1,4,0/14/1,2,0,5,3,1/12/S").expect("a valid position");
        let exact = crate::search::Solver::with_default_table(Rules::Standard)
            .solve(&pos)
            .0;
        for guess in [i32::MIN, -60, -3, 0, exact, exact + 1, 60, i32::MAX] {
            let mut solver = crate::search::Solver::with_default_table(Rules::Standard);
            solver.set_first_guess(&pos, guess);
            assert_eq!(solver.solve(&pos).0, exact, "first guess {guess}");
        }
    }

    #[test]
    fn a_guess_is_spent_by_the_next_solve_even_when_the_database_answers_it() {
        // 8 seeds left: the database answers at once, and the guess must not outlive it.
        let db = crate::search::Egdb::build(6, 8, Rules::Standard, &crate::search::egdb::Quiet)
            .expect("a small database");
        let mut solver = crate::search::Solver::with_default_table(Rules::Standard);
        solver.set_egdb(std::sync::Arc::new(db));
        let answered = parse_kpn("1,0,0,2,0,1/20/0,1,0,0,3,0/18/S").expect("a valid position");
        let next = parse_kpn("2,0,3,1,4,0/14/1,2,0,5,3,1/12/S").expect("a valid position");
        let mut fresh = crate::search::Solver::with_default_table(Rules::Standard);
        fresh.set_egdb(solver.egdb().expect("set above").clone());
        let (value, stats) = fresh.solve(&next);
        solver.set_first_guess(&answered, 40);
        solver.solve(&answered);
        // A guess left over would start the next solve elsewhere: other probes, same value.
        assert_eq!(solver.solve(&next), (value, stats));
    }

    #[test]
    fn a_small_endgame_is_guessed_exactly() {
        // Few seeds left: the search reaches every game end, so the guess is the value.
        let pos = parse_kpn("1,0,0,2,0,1/20/0,1,0,0,3,0/18/S").expect("a valid position");
        let exact = crate::search::Solver::with_default_table(Rules::Standard)
            .solve(&pos)
            .0;
        assert_eq!(first_guess(&pos, Rules::Standard, 1_000_000), exact);
    }
}
