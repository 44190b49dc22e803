//! The search's transposition table, iterative deepening and null-window searches must not
//! change what it finds: the value and every best root move equal plain minimax's, at the
//! depths the GA uses, whatever other searches ran before on the same thread.

use kalah_tuner::agents::{rng_from_seed, Agent, RandomAgent};
use kalah_tuner::eval::{feature_set, Evaluator, StoreDiff, WeightedEval};
use kalah_tuner::game::{Position, Rules};
use kalah_tuner::search::{minimax_plain, AlphaBeta, SearchResult};

fn positions(count: usize, seed: u64) -> Vec<Position> {
    let mut rng = rng_from_seed(seed);
    let mut out = Vec::new();
    while out.len() < count {
        let mut pos = Position::start(6, if out.len() % 3 == 0 { 3 } else { 4 }).unwrap();
        let plies = 2 + out.len() % 30;
        for _ in 0..plies {
            if pos.is_game_over() {
                break;
            }
            let mv = RandomAgent.choose(&pos, &mut rng).mv;
            pos.play(mv, Rules::Standard).unwrap();
        }
        if !pos.is_game_over() {
            out.push(pos);
        }
    }
    out
}

fn plain<E: Evaluator>(pos: &Position, depth: u32, eval: &E, rules: Rules) -> (i64, Vec<usize>) {
    let values = minimax_plain(pos, depth, eval, rules);
    let best = values.iter().map(|&(_, v)| v).max().unwrap();
    let moves = values
        .iter()
        .filter(|&&(_, v)| v == best)
        .map(|&(m, _)| m)
        .collect();
    (best, moves)
}

fn exact(result: &SearchResult) -> (i64, Vec<usize>) {
    (result.value, result.best_moves.clone())
}

fn weighted(set: &str, preset: usize, rules: Rules) -> WeightedEval {
    let set = feature_set(set).unwrap();
    WeightedEval::new(set.features, set.presets[preset].1, rules).unwrap()
}

#[test]
fn deep_searches_equal_plain_minimax() {
    let abrams = weighted("abrams3", 0, Rules::Standard);
    let abrams2 = weighted("abrams3", 1, Rules::EmptyCapture);
    let hunter = weighted("hunter10", 0, Rules::Standard);
    for (i, pos) in positions(60, 5).iter().enumerate() {
        let depth = 4 + (i % 3) as u32;
        let rules = if i % 4 == 1 {
            Rules::EmptyCapture
        } else {
            Rules::Standard
        };
        let ab = AlphaBeta::new(&StoreDiff, rules).search_depth(pos, depth);
        assert_eq!(
            exact(&ab),
            plain(pos, depth, &StoreDiff, rules),
            "minimax {pos} d{depth}"
        );
        let eval = match i % 3 {
            0 => &abrams,
            1 => &abrams2,
            _ => &hunter,
        };
        let ab = AlphaBeta::new(eval, rules).search_depth(pos, depth);
        assert_eq!(
            exact(&ab),
            plain(pos, depth, eval, rules),
            "heuristic {pos} d{depth}"
        );
    }
}

#[test]
fn results_do_not_depend_on_earlier_searches_or_the_searcher() {
    let a = weighted("abrams3", 0, Rules::Standard);
    let b = weighted("abrams3", 2, Rules::Standard);
    let positions = positions(40, 9);
    let fresh: Vec<SearchResult> = positions
        .iter()
        .map(|p| AlphaBeta::new(&a, Rules::Standard).search_depth(p, 6))
        .collect();
    // One searcher reused across positions, with another evaluator's searches in between
    // (and from the other side), must give the same results and even the same node counts.
    let mut reused = AlphaBeta::new(&a, Rules::Standard);
    for (pos, want) in positions.iter().zip(&fresh).rev() {
        AlphaBeta::new(&b, Rules::Standard).search_depth(pos, 5);
        assert_eq!(&reused.search_depth(pos, 6), want, "{pos}");
    }
    // Searches on other threads have their own tables and agree too.
    let threads: Vec<_> = positions
        .chunks(10)
        .map(|chunk| {
            let (a, chunk) = (a.clone(), chunk.to_vec());
            std::thread::spawn(move || {
                chunk
                    .iter()
                    .map(|p| AlphaBeta::new(&a, Rules::Standard).search_depth(p, 6))
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let joined: Vec<SearchResult> = threads
        .into_iter()
        .flat_map(|t| t.join().unwrap())
        .collect();
    assert_eq!(joined, fresh);
}

#[test]
fn boards_too_big_for_the_table_still_search_exactly() {
    // 8 pits and 100-seed pits do not fit the table's compact keys: no table is used.
    let mut rng = rng_from_seed(2);
    for (m, n) in [(8usize, 3u32), (6, 30), (1, 1), (12, 1)] {
        let mut pos = Position::start(m, n).unwrap();
        for _ in 0..3 {
            if pos.is_game_over() {
                break;
            }
            let mv = RandomAgent.choose(&pos, &mut rng).mv;
            pos.play(mv, Rules::Standard).unwrap();
        }
        if pos.is_game_over() {
            continue;
        }
        let ab = AlphaBeta::new(&StoreDiff, Rules::Standard).search_depth(&pos, 3);
        assert_eq!(
            exact(&ab),
            plain(&pos, 3, &StoreDiff, Rules::Standard),
            "{pos}"
        );
    }
}

/// An agent keeps its table across the moves of a game: every search must still return what
/// a fresh search returns.
#[test]
fn keeping_the_table_across_a_game_changes_no_result() {
    use kalah_tuner::agents::{rng_from_seed, Agent, RandomAgent};
    use kalah_tuner::eval::{feature_set, WeightedEval};
    use kalah_tuner::game::{Position, Rules, Side};
    use kalah_tuner::search::{AlphaBeta, KeptTable};

    let set = feature_set("abrams3").unwrap();
    let eval = WeightedEval::new(set.features, set.presets[0].1, Rules::Standard).unwrap();
    for game in 0..6u64 {
        let mut rng = rng_from_seed(game);
        let mut pos = Position::start(6, 4).unwrap();
        for _ in 0..3 {
            let mv = RandomAgent.choose(&pos, &mut rng).mv;
            pos.play(mv, Rules::Standard).unwrap();
        }
        let depth = 3 + (game % 3) as u32;
        let mut kept = [KeptTable::default(), KeptTable::default()];
        let mut kept_nodes = 0;
        let mut fresh_nodes = 0;
        while !pos.is_game_over() {
            let side = pos.side_to_move();
            let slot = if side == Side::South { 0 } else { 1 };
            let fresh = AlphaBeta::new(&eval, Rules::Standard).search_depth(&pos, depth);
            let again = AlphaBeta::new(&eval, Rules::Standard).search_depth_keeping(
                &pos,
                depth,
                &mut kept[slot],
            );
            assert_eq!(
                (again.value, &again.best_moves),
                (fresh.value, &fresh.best_moves),
                "{pos}"
            );
            kept_nodes += again.nodes;
            fresh_nodes += fresh.nodes;
            pos.play(fresh.best_moves[0], Rules::Standard).unwrap();
        }
        assert!(
            kept_nodes <= fresh_nodes,
            "game {game}: {kept_nodes} > {fresh_nodes} nodes"
        );
    }
}
