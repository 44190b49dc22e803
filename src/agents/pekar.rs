//! The agents of Pekar et al. (2020), "Review of Kalah Game Research and the Proposition of a
//! Novel Heuristic-Deterministic Algorithm Compared to Tree-Search Solutions and Human
//! Decision-Making" (Informatics 7(3):34): the heuristic-deterministic rule list
//! (Algorithm 1) and the modified minimax (Algorithm 3) with cost function (4).
//!
//! Pekar numbers pits from the store outwards ("pit number 1" is the pit next to the store);
//! here moves keep the project's numbering (move m is the pit next to the store), and every
//! rule scans from the store outwards as the paper does.
//!
//! The paper describes the capture rule LastSeedToTarget by three cases: a sowing that ends in
//! an empty pit of the mover, a pit of exactly one lap (2m + 1 seeds) that ends in itself, and
//! a lap that ends in an empty pit on the near side of the starting pit. All three are the
//! sowings whose last seed captures, so the rule plays each move on a copy of the board and
//! reads the capture off the outcome: the lap cases come out exactly, and so do laps the paper
//! did not list (two laps and more).

use super::{Agent, Decision, GameRng, MoveValue, Ties};
use crate::eval::terminal_score;
use crate::game::{Position, Rules, Side};
use crate::search::{Budget, Depth};

/// Moves of the side to move, nearest the store first (the paper's scan order).
fn from_store_outwards(pos: &Position) -> impl Iterator<Item = usize> {
    let legal = pos.legal_moves();
    (1..=pos.pits()).rev().filter(move |&mv| legal.contains(mv))
}

/// LastSeedToKalaha: the first pit (from the store outwards) whose last seed ends in the
/// mover's store, earning an extra turn.
pub(crate) fn last_seed_to_kalaha(pos: &Position) -> Option<usize> {
    let side = pos.side_to_move();
    let store = pos.store_index(side);
    from_store_outwards(pos).find(|&mv| pos.landing_cell(side, mv) == store)
}

/// Opponent seeds a move of the side to move would capture (0 when it captures none).
fn captured_opponent_seeds(pos: &Position, mv: usize, rules: Rules) -> u32 {
    let mut child = *pos;
    let outcome = child.play_unchecked(mv, rules);
    // The capturing seed itself is the mover's own.
    (outcome.captured as u32).saturating_sub(1)
}

/// LastSeedToTarget: the moves that capture the most opponent seeds (laps included), if any
/// captures at least one.
pub(crate) fn last_seed_to_target(pos: &Position, rules: Rules) -> Vec<usize> {
    best_by(from_store_outwards(pos), |mv| {
        captured_opponent_seeds(pos, mv, rules)
    })
}

/// OpponentSeedToStash: the mover's pits that the opponent could capture most seeds from if
/// it moved now; sowing such a pit saves its seeds.
pub(crate) fn opponent_seed_to_stash(pos: &Position, rules: Rules) -> Vec<usize> {
    let me = pos.side_to_move();
    let opp = me.opponent();
    let view = pos.with_side_to_move(opp);
    let first = pos.first_pit(me);
    let m = pos.pits();
    // For each of my pits, the most seeds the opponent would take from it.
    let mut threat = [0u32; 16];
    for mv in view.legal_moves() {
        let taken = captured_opponent_seeds(&view, mv, rules);
        if taken == 0 {
            continue;
        }
        let target = pos.opposite(view.landing_cell(opp, mv));
        if target >= first && target < first + m {
            let k = target - first;
            threat[k] = threat[k].max(taken);
        }
    }
    best_by(from_store_outwards(pos), |mv| threat[mv - 1])
}

/// FirstNonEmptyPit: the non-empty pit nearest the store.
pub(crate) fn first_non_empty_pit(pos: &Position) -> Option<usize> {
    from_store_outwards(pos).next()
}

/// LastSeedToTargetSimple (Algorithm 3): like LastSeedToTarget but only plain sowings into an
/// empty pit that is not the one next to the store and faces seeds, no laps.
pub(crate) fn last_seed_to_target_simple(pos: &Position) -> Option<usize> {
    let side = pos.side_to_move();
    let m = pos.pits();
    let mut best: Option<(usize, u32)> = None;
    // Target pits from the store outwards, skipping the pit next to the store.
    for target in (1..m).rev() {
        if pos.pit(side, target) != 0 {
            continue;
        }
        let cell = pos.first_pit(side) + target - 1;
        let facing = pos.cells()[pos.opposite(cell)] as u32;
        if facing == 0 {
            continue;
        }
        // A pit farther from the store whose seeds end exactly on the target.
        let source = (1..target)
            .rev()
            .find(|&mv| pos.pit(side, mv) as usize == target - mv);
        if let Some(mv) = source {
            if best.is_none_or(|(_, v)| facing > v) {
                best = Some((mv, facing));
            }
        }
    }
    best.map(|(mv, _)| mv)
}

/// The moves with the largest positive score, in the order given.
fn best_by(moves: impl Iterator<Item = usize>, score: impl Fn(usize) -> u32) -> Vec<usize> {
    let mut best = 0;
    let mut out = Vec::new();
    for mv in moves {
        let s = score(mv);
        if s > best {
            best = s;
            out.clear();
        }
        if s == best && s > 0 {
            out.push(mv);
        }
    }
    out.sort_unstable();
    out
}

/// Pekar et al.'s heuristic-deterministic agent (Algorithm 1): the first rule that applies
/// picks the move. Ties within a rule break by the agent's RNG, or by the paper's scan order
/// (nearest the store) with `"ties": "first"`.
#[derive(Clone, Debug)]
pub struct Pekar {
    pub rules: Rules,
    pub ties: Ties,
}

impl Pekar {
    fn pick(&self, moves: &[usize], rng: &mut GameRng) -> usize {
        match self.ties {
            // The paper's own order prefers the pit nearest the store.
            Ties::First => *moves.iter().max().expect("non-empty"),
            Ties::Random => self.ties.pick(moves, rng),
        }
    }
}

impl Agent for Pekar {
    fn choose(&mut self, pos: &Position, rng: &mut GameRng) -> Decision {
        if let Some(swap) = super::store_rule_swap(pos) {
            return super::decide_swap(pos, swap, |pos| self.choose(pos, rng));
        }
        let decide = |mv| Decision {
            mv,
            nodes: 0,
            playouts: 0,
            value: None,
        };
        if let Some(mv) = last_seed_to_kalaha(pos) {
            return decide(mv);
        }
        let targets = last_seed_to_target(pos, self.rules);
        if !targets.is_empty() {
            return decide(self.pick(&targets, rng));
        }
        let stash = opponent_seed_to_stash(pos, self.rules);
        if !stash.is_empty() {
            return decide(self.pick(&stash, rng));
        }
        decide(first_non_empty_pit(pos).expect("a position that is not over has a move"))
    }
}

/// Pekar et al.'s modified minimax (Algorithm 3): at every node the side to move first makes
/// the "safe" moves of the rule list without branching (an extra turn by LastSeedToKalaha,
/// then a capture by LastSeedToTargetSimple); only when neither applies does it branch over all
/// moves. Leaves are scored by cost function (4) from the root player's view:
/// `10 [(Np,end - Np,start) - (No,end - No,start)] + Np,rep + 5 Np,1`, where Np,rep counts the
/// root player's extra turns on the path and Np,1 is 1 when its pit next to the store is
/// empty. Finished games score as everywhere else: any win beats any leaf.
#[derive(Clone, Debug)]
pub struct PekarMinimax {
    pub rules: Rules,
    pub depth: Depth,
    pub ties: Ties,
    /// The caller's bounds ([`Agent::set_budget`]).
    pub budget: Budget,
}

struct PekarSearch<'b> {
    rules: Rules,
    me: Side,
    start_diff: i64,
    nodes: u64,
    budget: Option<&'b Budget>,
    stopped: bool,
}

impl PekarSearch<'_> {
    fn moves(&self, pos: &Position) -> Vec<usize> {
        if pos.swap_available() {
            // The pie rule's swap is one more option to search; the rule list's shortcuts
            // know nothing of it, so this node branches over everything.
            let mut moves: Vec<usize> = from_store_outwards(pos).collect();
            moves.push(crate::game::SWAP);
            return moves;
        }
        if let Some(mv) = last_seed_to_kalaha(pos) {
            return vec![mv];
        }
        if let Some(mv) = last_seed_to_target_simple(pos) {
            return vec![mv];
        }
        from_store_outwards(pos).collect()
    }

    fn cost(&self, pos: &Position, reps: i64) -> i64 {
        let diff = pos.store_diff(self.me) as i64;
        let pit_one_empty = pos.pit(self.me, pos.pits()) == 0;
        10 * (diff - self.start_diff) + reps + 5 * pit_one_empty as i64
    }

    fn node(
        &mut self,
        pos: &Position,
        depth: u32,
        reps: i64,
        mut alpha: i64,
        mut beta: i64,
    ) -> i64 {
        self.nodes += 1;
        if let Some(budget) = self.budget {
            // The clock every 4096 nodes, the stop flag (one load) at every one.
            self.stopped |= if self.nodes & 0xfff == 0 {
                budget.check(self.nodes)
            } else {
                budget.is_stopped()
            };
        }
        if self.stopped {
            // The caller discards a stopped search; any value ends it fastest.
            return 0;
        }
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
            return self.cost(pos, reps);
        }
        let maximizing = pos.side_to_move() == self.me;
        let mut best = if maximizing { i64::MIN } else { i64::MAX };
        for mv in self.moves(pos) {
            let value = self.child(pos, mv, depth, reps, alpha, beta);
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

    fn child(
        &mut self,
        pos: &Position,
        mv: usize,
        depth: u32,
        reps: i64,
        alpha: i64,
        beta: i64,
    ) -> i64 {
        let mover = pos.side_to_move();
        let mut child = *pos;
        let outcome = child.play_unchecked(mv, self.rules);
        let reps = reps + (outcome.extra_turn && mover == self.me) as i64;
        let depth = if outcome.extra_turn { depth } else { depth - 1 };
        self.node(&child, depth, reps, alpha, beta)
    }
}

impl Agent for PekarMinimax {
    fn choose(&mut self, pos: &Position, rng: &mut GameRng) -> Decision {
        let me = pos.side_to_move();
        let mut search = PekarSearch {
            rules: self.rules,
            me,
            start_diff: pos.store_diff(me) as i64,
            nodes: 1,
            budget: Some(&self.budget),
            stopped: false,
        };
        let mut best = i64::MIN;
        let mut best_moves = Vec::new();
        let depth = self.depth.for_root(pos.legal_moves().len()).max(1);
        for mv in search.moves(pos) {
            // Just below the best so far, so that ties are proven and broken fairly.
            let value = search.child(pos, mv, depth, 0, best.saturating_sub(1), i64::MAX);
            if value > best {
                best = value;
                best_moves.clear();
            }
            if value == best {
                best_moves.push(mv);
            }
        }
        best_moves.sort_unstable();
        Decision {
            mv: self.ties.pick(&best_moves, rng),
            nodes: search.nodes,
            playouts: 0,
            value: Some(MoveValue::PekarCost(best)),
        }
    }

    fn set_budget(&mut self, budget: &Budget) {
        self.budget = budget.clone();
    }
}
