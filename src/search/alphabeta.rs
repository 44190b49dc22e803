//! Alpha-beta minimax to a fixed number of turns, or iterative deepening within a time
//! budget. Values are from the point of view of the side to move at the root ("me").

use std::time::{Duration, Instant};

use crate::eval::{terminal_score, Evaluator};
use crate::game::{Position, Rules, Side};

/// What a root search found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SearchResult {
    /// Every root move whose value equals the best, in move order; callers break the tie.
    pub best_moves: Vec<usize>,
    /// Value of the best moves for the side to move at the root.
    pub value: i64,
    /// Positions visited.
    pub nodes: u64,
    /// Depth of the last completed iteration.
    pub depth: u32,
}

/// A reusable alpha-beta searcher for one evaluator and one rule set.
pub struct AlphaBeta<'e, E: Evaluator> {
    eval: &'e E,
    rules: Rules,
    me: Side,
    nodes: u64,
    deadline: Option<Instant>,
    aborted: bool,
}

/// Moves ordered so that alpha-beta cuts early: extra turns first (nearest the store first, as
/// those disturb the fewest other pits), then captures, then the rest from the store outwards.
#[inline]
fn ordered_moves(pos: &Position, buf: &mut [usize; 16]) -> usize {
    let side = pos.side_to_move();
    let m = pos.pits();
    let store = pos.store_index(side);
    let first = pos.first_pit(side);
    let mut n = 0;
    let legal = pos.legal_moves();
    let mut rest = [0usize; 16];
    let mut n_rest = 0;
    for mv in (1..=m).rev() {
        if !legal.contains(mv) {
            continue;
        }
        let land = pos.landing_cell(side, mv);
        if land == store {
            buf[n] = mv;
            n += 1;
        } else if land >= first
            && land < first + m
            && pos.cells()[land] == 0
            && pos.pit(side, mv) <= 2 * m as u32
        {
            rest[n_rest] = mv;
            n_rest += 1;
        } else {
            rest[n_rest] = mv | 0x100;
            n_rest += 1;
        }
    }
    // Captures (unflagged) before quiet moves (flagged), keeping their order otherwise.
    for &mv in rest[..n_rest].iter().filter(|&&mv| mv & 0x100 == 0) {
        buf[n] = mv;
        n += 1;
    }
    for &mv in rest[..n_rest].iter().filter(|&&mv| mv & 0x100 != 0) {
        buf[n] = mv & 0xff;
        n += 1;
    }
    n
}

impl<'e, E: Evaluator> AlphaBeta<'e, E> {
    pub fn new(eval: &'e E, rules: Rules) -> Self {
        AlphaBeta {
            eval,
            rules,
            me: Side::South,
            nodes: 0,
            deadline: None,
            aborted: false,
        }
    }

    /// Searches `depth` turns from `pos`, which must not be over.
    pub fn search_depth(&mut self, pos: &Position, depth: u32) -> SearchResult {
        self.nodes = 0;
        self.deadline = None;
        self.aborted = false;
        self.root(pos, depth.max(1))
    }

    /// Iterative deepening until `budget` runs out (or `max_depth` is reached); returns the
    /// deepest completed iteration. At least depth 1 always completes.
    pub fn search_time(
        &mut self,
        pos: &Position,
        budget: Duration,
        max_depth: u32,
    ) -> SearchResult {
        let start = Instant::now();
        self.nodes = 0;
        self.aborted = false;
        self.deadline = None;
        let mut best = self.root(pos, 1);
        let mut total_nodes = best.nodes;
        for depth in 2..=max_depth.max(1) {
            self.deadline = Some(start + budget);
            self.nodes = 0;
            let result = self.root(pos, depth);
            total_nodes += self.nodes;
            if self.aborted {
                break;
            }
            best = result;
            // A decided game will not change with more depth.
            if crate::eval::is_decisive(best.value) || start.elapsed() >= budget {
                break;
            }
        }
        best.nodes = total_nodes;
        best
    }

    fn root(&mut self, pos: &Position, depth: u32) -> SearchResult {
        self.me = pos.side_to_move();
        self.nodes += 1;
        let mut buf = [0usize; 16];
        let n = ordered_moves(pos, &mut buf);
        let mut best_value = i64::MIN;
        let mut best_moves: Vec<usize> = Vec::new();
        for &mv in &buf[..n] {
            let mut child = *pos;
            let outcome = child.play_unchecked(mv, self.rules);
            let child_depth = if outcome.extra_turn { depth } else { depth - 1 };
            // A window just below the best so far proves ties exactly, so callers can break
            // them fairly.
            let alpha = best_value.saturating_sub(1);
            let value = self.node(&child, child_depth, alpha, i64::MAX);
            if self.aborted {
                break;
            }
            if value > best_value {
                best_value = value;
                best_moves.clear();
                best_moves.push(mv);
            } else if value == best_value {
                best_moves.push(mv);
            }
        }
        best_moves.sort_unstable();
        SearchResult {
            best_moves,
            value: best_value,
            nodes: self.nodes,
            depth,
        }
    }

    fn node(&mut self, pos: &Position, depth: u32, mut alpha: i64, mut beta: i64) -> i64 {
        self.nodes += 1;
        if pos.is_game_over() {
            let (south, north) = pos.final_stores();
            let margin = south as i32 - north as i32;
            return terminal_score(if self.me == Side::South {
                margin
            } else {
                -margin
            });
        }
        if depth == 0 {
            return self.eval.evaluate(pos, self.me);
        }
        if self.nodes & 0xfff == 0 {
            if let Some(deadline) = self.deadline {
                if Instant::now() >= deadline {
                    self.aborted = true;
                }
            }
        }
        if self.aborted {
            return 0;
        }
        let maximizing = pos.side_to_move() == self.me;
        let mut buf = [0usize; 16];
        let n = ordered_moves(pos, &mut buf);
        let mut best = if maximizing { i64::MIN } else { i64::MAX };
        for &mv in &buf[..n] {
            let mut child = *pos;
            let outcome = child.play_unchecked(mv, self.rules);
            let child_depth = if outcome.extra_turn { depth } else { depth - 1 };
            let value = self.node(&child, child_depth, alpha, beta);
            if maximizing {
                best = best.max(value);
                alpha = alpha.max(best);
            } else {
                best = best.min(value);
                beta = beta.min(best);
            }
            if alpha >= beta {
                break;
            }
        }
        best
    }
}

/// Plain minimax without pruning: the reference that alpha-beta must agree with. Returns the
/// value of every legal root move.
pub fn minimax_plain<E: Evaluator>(
    pos: &Position,
    depth: u32,
    eval: &E,
    rules: Rules,
) -> Vec<(usize, i64)> {
    fn go<E: Evaluator>(pos: &Position, depth: u32, me: Side, eval: &E, rules: Rules) -> i64 {
        if pos.is_game_over() {
            let (south, north) = pos.final_stores();
            let margin = south as i32 - north as i32;
            return terminal_score(if me == Side::South { margin } else { -margin });
        }
        if depth == 0 {
            return eval.evaluate(pos, me);
        }
        let values = pos.legal_moves().into_iter().map(|mv| {
            let mut child = *pos;
            let extra = child.play_unchecked(mv, rules).extra_turn;
            go(
                &child,
                if extra { depth } else { depth - 1 },
                me,
                eval,
                rules,
            )
        });
        if pos.side_to_move() == me {
            values.max().unwrap_or(0)
        } else {
            values.min().unwrap_or(0)
        }
    }
    let me = pos.side_to_move();
    pos.legal_moves()
        .into_iter()
        .map(|mv| {
            let mut child = *pos;
            let extra = child.play_unchecked(mv, rules).extra_turn;
            let d = depth.max(1);
            (
                mv,
                go(&child, if extra { d } else { d - 1 }, me, eval, rules),
            )
        })
        .collect()
}
