//! The cost model: rough processor time of a game side by agent kind and board, from which
//! run, match and tournament estimates (and the limits that refuse what would take weeks)
//! are made. Rough on purpose: it has to tell a run of minutes from one of hours and one of
//! weeks, and it is checked against measured runs within a factor of 2
//! (docs/results/performance.md#cost-estimates).

use super::spec::FeatureChoice;
use super::AgentSpec;
use crate::eval::{parse_features, Feature};

/// Moves one side makes in a Kalah(6,4) game, about.
const MOVES_A_SIDE: f64 = 18.0;

/// How much longer than Kalah(6,4) a game on `pits` x `seeds` lasts, for agents whose cost a
/// move does not depend on the board (a game has about as many moves as seeds).
pub(crate) fn board_scale(pits: usize, seeds: u32) -> f64 {
    (pits as f64 * seeds as f64 / 24.0).max(1.0)
}

/// One side of a game of an alpha-beta search at `depth` on `pits` x `seeds`, in
/// milliseconds, whose evaluation costs `leaf` times the store difference's a position
/// ([`leaf_cost`]): `K x pits^1.27 x seeds^0.63 x (0.445 x pits^0.695 x seeds^0.224)^depth x
/// pits^(0.00913 x depth^2)` (a game's moves grow with the board, and every ply multiplies a
/// search's positions by the effective branching of alpha-beta with Kalah's extra turns,
/// wider with more pits and more seeds, and wider still deeper on wide boards: 12x8 costs
/// about 20 times more a side for each two plies from depth 2 to 6, and 48 times from 6 to
/// 10). Fitted by least squares on the logarithms of `kalah-tuner bench --cost` (self-play on
/// one thread, processor time; boards 4x3 to 12x8, depths 2 to 10, store difference and 1 to
/// 24 features; 2026-11-26, and 12x8 at depth 10 on 2026-11-27, weighted four times as the
/// one cell that deep; 0.77 of the mean of three games): every cell is within 2x but two
/// 2-game cells on 12x8 (0.24 and 3.5, as before the depth-squared term)
/// (docs/results/performance.md#cost-estimates).
pub(crate) fn search_side_ms(depth: u32, pits: usize, seeds: u32, leaf: f64) -> f64 {
    let (p, s, d) = (pits as f64, seeds as f64, depth as f64);
    let branching = 0.4447 * p.powf(0.6955) * s.powf(0.2240);
    4.457e-4 * p.powf(1.2656) * s.powf(0.6287) * branching.powf(d) * p.powf(0.00913 * d * d) * leaf
}

/// What a search position costs with an evaluation of `features` (none: the store difference)
/// against the store difference alone: 0.09 more for each feature read off a side's pits,
/// 1.95 x (pits / 6)^2 more for each capture feature (`capturable_diff`, `neg_opp_capture`,
/// `neg_exposed`, `capturable_diff_late`), and nothing measurable for Ahmed's pit counts.
/// Fitted with [`search_side_ms`] on the same table, when the capture features still played
/// every pit's sowing: they now work the captures out (1.6 to 2.1x faster players), so their
/// term errs high until the table is measured again.
pub(crate) fn leaf_cost(features: &[Feature], pits: usize) -> f64 {
    let capture = [
        Feature::CapturableDiff,
        Feature::NegOppCapture,
        Feature::NegExposed,
        Feature::CapturableDiffLate,
    ];
    let ahmed = &Feature::ALL[Feature::OppSideSeeds as usize..=Feature::OppLoadedSeeds as usize];
    let captures = features.iter().filter(|f| capture.contains(f)).count() as f64;
    let cheap = features
        .iter()
        .filter(|f| !capture.contains(f) && !ahmed.contains(f))
        .count() as f64;
    1.0 + 0.09 * cheap + 1.95 * (pits as f64 / 6.0).powi(2) * captures
}

/// The features of a heuristic's choice (a set's, or a list); the default set's for a name
/// that is no set (such a spec does not build).
pub(crate) fn features_of(features: &FeatureChoice) -> Vec<Feature> {
    match features {
        FeatureChoice::Set(name) => {
            parse_features(name).unwrap_or_else(|_| Feature::ALL[..10].to_vec())
        }
        FeatureChoice::List(list) => list.clone(),
    }
}

/// The share of a whole game's processor time that a game stopped as soon as one store holds
/// more than half of the seeds takes (a GA's fitness games, [`crate::matches::Pairing::points`]):
/// the endgame it leaves out is short but its early moves are the dearest searches. Measured
/// with `kalah-tuner bench --cost --cost-decided` against whole games of the same cells.
pub(crate) const DECIDED_GAME_SHARE: f64 = 0.9;

/// The share of its fitness games' modelled cost that a GA generation spends on boards of up
/// to 6 pits, where every searcher remembers its root results for the generation
/// (`Position::fits_key16` keys the memo): a generation's games start from the same openings
/// for every pair, so an individual (and a fixed opponent) meets the same positions again and
/// again, and the side table above is of tuned players. Fitted to the recorded runs of
/// docs/run-costs.toml on Kalah(6,4) (2026-11-29: the `hunter` preset and its CMA-ES, SPSA
/// and DE runs, the main job, `hunter10-vs-published`, the `abrams` preset), which took 0.38
/// to 0.50 of the unscaled model at depth 4 and 1.1 at depth 7.
pub(crate) const REMEMBERED_FITNESS_SHARE: f64 = 0.65;

/// How much dearer an individual's search side is than the side table's tuned players on
/// boards of more than 6 pits, where no root result is remembered: `1.5 x (pits x seeds /
/// 48)^(0.8 x (depth - 2))`, at least 1.5. An untuned individual's evaluation orders moves
/// badly and plays long games, and more so on larger boards and deeper: self-play of random
/// weights searched 2.4 to 3.2 times the nodes of the published weights on 6 and 7 pits and 13
/// to 36 times on 12 pits (three random pairs each, 2026-11-29). Fitted to the recorded runs
/// at depths 3 to 6 on Kalah(7,7), (12,4) and (12,8) of docs/run-costs.toml (2026-11-29),
/// which took 1.4 to 17 times the model without it; deeper, it is held at its depth-6 value
/// (no run measured, and the tuned players' term already grows faster with depth on wide
/// boards). The spread between random individuals is wide (one pair on
/// 12x8 at depth 6 searched 75 times another's nodes), so a single wide-board run may land
/// outside 2x of this.
pub(crate) fn untuned_wide_board_factor(pits: usize, seeds: u32, depth: u32) -> f64 {
    let size = (pits as f64 * seeds as f64 / 48.0).max(1.0);
    1.5 * size.powf(0.8 * (depth.clamp(2, 6) - 2) as f64)
}

/// The factors a GA generation's sides are counted at on a board of `pits` x `seeds` at
/// `depth`: (its fitness games, both sides; an individual's side, beside that, in any game).
pub(crate) fn population_factors(pits: usize, seeds: u32, depth: u32) -> (f64, f64) {
    if pits <= 6 {
        (REMEMBERED_FITNESS_SHARE, 1.0)
    } else {
        (1.0, untuned_wide_board_factor(pits, seeds, depth))
    }
}

/// What a TD learner spends on a self-play game besides its searches (features, gradients and
/// traces of every position), in milliseconds on Kalah(6,4): measured with `kalah-tuner learn`
/// (2026-11-26: 8,000 games at depth 2 took 5.2 s, 1.6 s of it searches and the panel).
pub(crate) const TD_GAME_OVERHEAD_MS: f64 = 0.35;

/// How an exact solve's cost grows with the pits: (pits / 6) to this power. Boards up to 8x8
/// fitted 3, which made `perfect:32` on 12x2 0.41 of even a lower bound of its measured time
/// (159 s a side, 2026-11-26: the games did not finish); 4.3 keeps the measured 4x3 to 8x8
/// cells (all solving from 22 seeds) within 2x.
pub(crate) const SOLVE_PITS_EXPONENT: f64 = 4.3;

/// How the growth of a solve with every two more seeds it solves from widens with the pits:
/// fourfold on 6 pits, times (pits / 6) to this power. Solves from 22 seeds (every measured
/// cell up to 8x8) do not depend on it. Fitted to single solves of Kalah(12,2) positions from
/// greedy games (`solve --threads 1 --no-egdb`, 2026-11-27, docs/results/performance.md): 0.6 to 42 s
/// from 24 seeds, 13 and 19 s from 26, both past 480 s from 28, so about fifteenfold or more
/// with every two seeds from 26; 1.9 puts 28 seeds at 524 s. `perfect:32` on 12x2, whose one
/// game ran past 2,361 processor-seconds without finishing, is then a day and more a side:
/// a run that plays it is refused by the core-hour cap, which is what such a run would need.
/// A single wide-board solve varies 65-fold at the same seeds, so no model is within 2x of
/// one; a `solve_nodes` cap bounds it.
pub(crate) const SOLVE_SEEDS_PITS_EXPONENT: f64 = 1.9;

/// Rough processor time, in milliseconds, that one side of a game on `pits` x `seeds` costs
/// when played by `spec`: what estimates count for opponents and panel agents. Searches as
/// [`search_side_ms`]; from the same table (`kalah-tuner bench --cost`, 2026-11-26): `mcts`
/// 0.033 ms an iteration on Kalah(6,4), growing as (pits x seeds / 24)^2.3 (longer playouts
/// and more moves: 4.3, 33, 95 and 317 ms a side for `mcts:1000` on 4x3, 6x4, 6x6 and 8x8);
/// `perfect` its fallback searches (above `max_seeds`) and a solve of about 8 ms x
/// (pits / 6)^[`SOLVE_PITS_EXPONENT`] on Kalah(6,4)'s 22 seeds, fourfold with every two more
/// seeds it solves from on 6 pits and more on wider boards ([`SOLVE_SEEDS_PITS_EXPONENT`])
/// (2.3, 16, 43 and 500 ms a side on those boards). Greedy, random and `pekar` are under the
/// table's resolution and counted at 0.05 ms, `a3c` 0.2 ms (2026-11-25), scaled by the seeds
/// ([`board_scale`]). A time budget is counted as spent in full on every move.
pub(crate) fn game_side_ms(spec: &AgentSpec, pits: usize, seeds: u32) -> f64 {
    use AgentSpec as A;
    let scale = board_scale(pits, seeds);
    let search = |depth, leaf| search_side_ms(depth, pits, seeds, leaf);
    match spec {
        A::Random | A::Greedy { .. } | A::Pekar { .. } => 0.05 * scale,
        A::A3c { .. } => 0.2 * scale,
        A::Minimax {
            depth,
            time_ms,
            nodes,
            ..
        } => bounded_search(search(depth_of(*depth), 1.0), *time_ms, *nodes, scale),
        A::Heuristic {
            features,
            depth,
            time_ms,
            nodes,
            ..
        } => bounded_search(
            search(depth_of(*depth), leaf_cost(&features_of(features), pits)),
            *time_ms,
            *nodes,
            scale,
        ),
        // Not measured: counted as a store-difference search.
        A::PekarMinimax { depth, .. } => search(depth_of(*depth), 1.0),
        // A capped solve is counted as spent in full on every move, at about 5 million
        // positions a second.
        A::Perfect {
            max_seeds,
            fallback_depth,
            solve_nodes,
            ..
        } => {
            let solved_from = (*max_seeds).min(2 * pits as u32 * seeds) as f64;
            let widening = (pits as f64 / 6.0).powf(SOLVE_SEEDS_PITS_EXPONENT);
            8.0 * (pits as f64 / 6.0).powf(SOLVE_PITS_EXPONENT)
                * (4.0 * widening).powf((solved_from - 22.0) / 2.0)
                + *solve_nodes as f64 / 5_000.0 * MOVES_A_SIDE * scale
                + search(*fallback_depth, 1.0)
        }
        A::Mcts {
            iterations,
            time_ms,
            ..
        } => match time_ms {
            Some(ms) => *ms as f64 * MOVES_A_SIDE * scale,
            None => *iterations as f64 * 0.033 * (pits as f64 * seeds as f64 / 24.0).powf(2.3),
        },
    }
}

/// A search side of cost `full` when it searches to its depth, under an agent's time or
/// node budget: a time budget is counted as spent in full on every move, a node budget at
/// about 30 million positions a second on one core.
fn bounded_search(full: f64, time_ms: Option<u64>, nodes: Option<u64>, scale: f64) -> f64 {
    match (time_ms, nodes) {
        (Some(ms), _) => ms as f64 * MOVES_A_SIDE * scale,
        (None, Some(n)) => (n as f64 / 30_000.0 * MOVES_A_SIDE * scale).min(full),
        (None, None) => full,
    }
}

/// Estimated processor time of `games` games between `a` and `b` on a board of `pits` pits
/// and `seeds` seeds each, in core-minutes ([`game_side_ms`] for each side).
pub(crate) fn games_core_minutes(
    a: &AgentSpec,
    b: &AgentSpec,
    games: u64,
    pits: usize,
    seeds: u32,
) -> f64 {
    games as f64 * (game_side_ms(a, pits, seeds) + game_side_ms(b, pits, seeds)) / 60_000.0
}

fn depth_of(depth: crate::search::Depth) -> u32 {
    match depth {
        crate::search::Depth::Fixed(d) => d,
        crate::search::Depth::Adaptive => crate::search::depth::MAX_ADAPTIVE_DEPTH,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn larger_boards_and_deeper_searches_cost_more() {
        let m = |d| AgentSpec::parse(&format!("minimax:{d}")).expect("a spec");
        assert!(game_side_ms(&m(6), 6, 4) > 3.0 * game_side_ms(&m(4), 6, 4));
        assert!(game_side_ms(&m(4), 12, 8) > 20.0 * game_side_ms(&m(4), 6, 4));
        let random = AgentSpec::parse("random").expect("a spec");
        assert_eq!(
            game_side_ms(&random, 12, 4),
            2.0 * game_side_ms(&random, 6, 4)
        );
    }

    /// The measurements of `kalah-tuner bench --cost --cost-csv` committed in docs/cost.csv
    /// (one game side's processor time; a row marked capped is a lower bound). An estimate
    /// too low is what lets a run past the core-hour cap, so no row may be more than 2x under
    /// the model, and the large-board cases (12x8 at depth 10, `perfect:32` on 12x2,
    /// once estimated 4x or more under) must be there: within 2x where finished.
    #[test]
    fn the_model_is_not_under_the_recorded_measurements() {
        // Read when the test runs, so that new measurements need no rebuild.
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/cost.csv");
        let table = std::fs::read_to_string(path).expect("docs/cost.csv is readable");
        let mut large = 0;
        for line in table.lines().filter(|l| !l.trim().is_empty()) {
            let fields: Vec<&str> = line.split(',').collect();
            let [pits, seeds, spec, _games, _plies, measured, capped, decided] = fields[..] else {
                panic!("docs/cost.csv: 8 fields expected in {line:?}");
            };
            let (pits, seeds): (usize, u32) = (pits.parse().unwrap(), seeds.parse().unwrap());
            let measured: f64 = measured.parse().unwrap();
            let share = if decided == "true" {
                DECIDED_GAME_SHARE
            } else {
                1.0
            };
            let spec_text = spec;
            let spec = AgentSpec::parse(spec).expect("docs/cost.csv holds valid specs");
            let ratio = share * game_side_ms(&spec, pits, seeds) / measured;
            assert!(
                ratio >= 0.5,
                "{line}: the model is {ratio:.2} of the measurement"
            );
            if (pits, seeds, spec_text) == (12, 8, "minimax:10")
                || (pits, seeds, spec_text) == (12, 2, "perfect:32")
            {
                assert!(
                    capped == "true" || ratio <= 2.0,
                    "{line}: model / measured {ratio:.2}"
                );
                large += 1;
            }
        }
        assert_eq!(large, 2, "docs/cost.csv has both large-board rows");
    }

    #[test]
    fn capture_features_make_a_leaf_dearer_on_wider_boards() {
        let h = |terms: &str| {
            let spec = AgentSpec::parse(&format!("heuristic:{terms}:4")).expect("a spec");
            game_side_ms(&spec, 7, 7)
        };
        let minimax = game_side_ms(&AgentSpec::parse("minimax:4").expect("a spec"), 7, 7);
        assert!(minimax < h("store_diff:1"));
        assert!(h("store_diff:1") < h("hunter10:published"));
        assert_eq!(
            features_of(&FeatureChoice::Set("hunter10".into())).len(),
            10
        );
        // A capture feature costs more than all ten of hunter10's, and more on 12 pits.
        assert!(h("store_diff+capturable_diff:1/1") > h("hunter10:published"));
        let captures = [Feature::CapturableDiff];
        assert!(leaf_cost(&captures, 12) > 2.5 * leaf_cost(&captures, 6));
        assert_eq!(leaf_cost(&[], 6), 1.0);
    }
}
