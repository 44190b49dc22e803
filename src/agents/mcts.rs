//! Monte Carlo tree search (Hunter 5.5): UCT selection, one expansion an iteration,
//! epsilon-greedy playouts to the end of the game (greedy as the greedy agent plays: extra
//! turns chained), rewards 1 / 0.5 / 0, the most-visited move.
//!
//! The tree lives in one arena (`Vec<Node>` with `u32` links), so an iteration allocates
//! nothing once the arena has grown; with tree reuse the subtree of the position actually
//! reached is compacted into a second arena that is swapped in, so the two buffers are
//! recycled across the moves of a game.

use std::time::{Duration, Instant};

use rand::RngExt;

use super::limits::Profile;
use super::{Agent, Decision, GameRng, MoveValue, Ties};
use crate::game::{Position, Rules, Side, SWAP};
use crate::search::Budget;

/// Hunter's budget: 4000 iterations a move.
pub(crate) const DEFAULT_ITERATIONS: u32 = 4000;
/// Hunter's exploration constant C_p = sqrt(2)/2.
pub(crate) const DEFAULT_C: f64 = std::f64::consts::FRAC_1_SQRT_2;
/// Chance of a random instead of a greedy move in a playout. Hunter does not give his value;
/// 0.1 keeps playouts close to greedy play (far better informed than random playouts) while
/// still sampling other lines: against `minimax:4` it scored 71% where 0 scored 69% and 0.3
/// 66% (docs/results/reproductions.md#mcts-playouts).
pub(crate) const DEFAULT_EPSILON: f64 = 0.1;
/// The arena stops growing here (about 200 MB); a time budget ends early rather than
/// exhaust memory.
const MAX_TREE_NODES: usize = 1 << 21;

const NONE: u32 = u32::MAX;

#[derive(Clone, Copy, Debug)]
struct Node {
    pos: Position,
    parent: u32,
    first_child: u32,
    next_sibling: u32,
    visits: u32,
    /// Rewards in half points (win 2, draw 1, loss 0) for the side that moved into this node:
    /// integers keep the sums exact and the search reproducible.
    half_points: u32,
    /// Moves not expanded yet, as a bit set (bit k - 1 for move k).
    untried: u16,
    mv: u8,
    /// The side that made the move into this node (the side to move at the parent; after an
    /// extra turn it is also the side to move here).
    mover: Side,
}

impl Node {
    fn new(pos: Position, parent: u32, mv: u8, mover: Side) -> Node {
        let untried = if pos.is_game_over() {
            0
        } else {
            pos.nonempty_pits().0
        };
        Node {
            pos,
            parent,
            first_child: NONE,
            next_sibling: NONE,
            visits: 0,
            half_points: 0,
            untried,
            mv,
            mover,
        }
    }
}

/// The `mcts` agent. Build it with `Mcts::new` (or from an `AgentSpec`).
#[derive(Clone, Debug)]
pub struct Mcts {
    pub rules: Rules,
    /// Iterations a move (ignored when `time` is set).
    pub iterations: u32,
    /// Exploration constant of UCT.
    pub c: f64,
    /// Chance of a uniformly random move at each step of a playout; otherwise the move that
    /// puts most seeds in the store at once.
    pub epsilon: f64,
    /// Search until this much time is spent instead of for `iterations`.
    pub time: Option<Duration>,
    /// Keep the subtree of the position reached when asked for the next move.
    pub reuse: bool,
    pub ties: Ties,
    /// The caller's bounds ([`Agent::set_budget`]): its stop flag read before every playout,
    /// its clock every 64.
    budget: Option<Budget>,
    /// Most playouts a move, whatever `time` says: the caller's cap ([`Budget::max_playouts`]);
    /// a clock alone stops at the library's.
    max_playouts: u64,
    nodes: Vec<Node>,
    spare: Vec<Node>,
    stack: Vec<(u32, u32)>,
}

impl Mcts {
    pub(crate) fn new(rules: Rules, iterations: u32, c: f64, epsilon: f64) -> Mcts {
        Mcts {
            rules,
            iterations,
            c,
            epsilon,
            time: None,
            reuse: false,
            ties: Ties::Random,
            budget: None,
            max_playouts: u64::MAX,
            nodes: Vec::new(),
            spare: Vec::new(),
            stack: Vec::new(),
        }
    }

    /// Sets up the root for `pos`: the matching subtree of the last search when reusing the
    /// tree, a fresh root otherwise.
    fn set_root(&mut self, pos: &Position) {
        if self.reuse && self.nodes.len() > 1 {
            // Every node of the arena descends from the old root. The same position can be
            // reached along several lines; the most-visited copy carries the most information
            // (lowest index on a tie, so the choice is reproducible).
            let mut found: Option<(u32, u32)> = None;
            for (i, n) in self.nodes.iter().enumerate().skip(1) {
                if n.pos == *pos && found.is_none_or(|(_, v)| n.visits > v) {
                    found = Some((i as u32, n.visits));
                }
            }
            if let Some((index, _)) = found {
                self.compact_from(index);
                return;
            }
        }
        self.nodes.clear();
        self.nodes
            .push(Node::new(*pos, NONE, 0, pos.side_to_move().opponent()));
    }

    /// Copies the subtree under `index` into the spare arena (depth first, links renumbered)
    /// and makes it the tree.
    fn compact_from(&mut self, index: u32) {
        self.spare.clear();
        self.stack.clear();
        self.stack.push((index, NONE));
        while let Some((old, new_parent)) = self.stack.pop() {
            let mut node = self.nodes[old as usize];
            let new_index = self.spare.len() as u32;
            node.parent = new_parent;
            node.first_child = NONE;
            node.next_sibling = NONE;
            if new_parent != NONE {
                // Children end up in reverse order, which only matters for selection ties:
                // the copy is deterministic, so the search stays reproducible.
                let p = &mut self.spare[new_parent as usize];
                node.next_sibling = p.first_child;
                p.first_child = new_index;
            }
            self.spare.push(node);
            let mut child = self.nodes[old as usize].first_child;
            while child != NONE {
                self.stack.push((child, new_index));
                child = self.nodes[child as usize].next_sibling;
            }
        }
        std::mem::swap(&mut self.nodes, &mut self.spare);
    }

    /// The child of `index` with the best UCT value: mean reward for the side choosing plus
    /// `c * sqrt(2 ln n / n_j)` (the form of Moghadam's implementation that Hunter followed).
    fn select_child(&self, index: u32) -> u32 {
        let parent = &self.nodes[index as usize];
        let log_n = 2.0 * (parent.visits as f64).ln();
        let mut best = NONE;
        let mut best_value = f64::NEG_INFINITY;
        let mut child = parent.first_child;
        while child != NONE {
            let n = &self.nodes[child as usize];
            let visits = n.visits as f64;
            let value = 0.5 * n.half_points as f64 / visits + self.c * (log_n / visits).sqrt();
            if value > best_value {
                best_value = value;
                best = child;
            }
            child = n.next_sibling;
        }
        best
    }

    /// One iteration: select, expand, play out, back up. The reward is returned for South.
    fn iterate(&mut self, rng: &mut GameRng) {
        let mut index = 0u32;
        loop {
            let node = &self.nodes[index as usize];
            if node.untried != 0 {
                index = self.expand(index, rng);
                break;
            }
            if node.first_child == NONE {
                break; // the game is over here
            }
            index = self.select_child(index);
        }
        let leaf = self.nodes[index as usize].pos;
        let south_half_points = if leaf.is_game_over() {
            half_points_south(&leaf)
        } else {
            playout(leaf, self.rules, self.epsilon, rng)
        };
        while index != NONE {
            let node = &mut self.nodes[index as usize];
            node.visits += 1;
            node.half_points += match node.mover {
                Side::South => south_half_points,
                Side::North => 2 - south_half_points,
            };
            index = node.parent;
        }
    }

    /// Adds one untried child of `index`, chosen at random, and returns it.
    fn expand(&mut self, index: u32, rng: &mut GameRng) -> u32 {
        let parent = &mut self.nodes[index as usize];
        let mv = random_bit(parent.untried, rng);
        parent.untried &= !(1 << (mv - 1));
        let mover = parent.pos.side_to_move();
        let mut pos = parent.pos;
        pos.play_unchecked(mv, self.rules);
        let child = self.nodes.len() as u32;
        let mut node = Node::new(pos, index, mv as u8, mover);
        node.next_sibling = self.nodes[index as usize].first_child;
        self.nodes[index as usize].first_child = child;
        self.nodes.push(node);
        child
    }

    /// Whether the caller's budget is spent: its stop flag (one load) before every playout,
    /// its clock every 64 (`i` counts them).
    #[inline]
    fn budget_spent(&self, i: u32) -> bool {
        self.budget.as_ref().is_some_and(|b| {
            if i % 64 == 0 {
                b.check(0)
            } else {
                b.is_stopped()
            }
        })
    }

    fn search(&mut self, rng: &mut GameRng) -> u64 {
        let mut done = 0u64;
        let cap = self.max_playouts;
        match self.time {
            None => {
                let iterations = u64::from(self.iterations).min(cap) as u32;
                for i in 0..iterations {
                    if self.nodes.len() >= MAX_TREE_NODES || self.budget_spent(i) {
                        break;
                    }
                    self.iterate(rng);
                    done += 1;
                }
            }
            Some(budget) => {
                let cap = cap.min(u64::from(Profile::Library.limits().max_mcts_iterations));
                let start = Instant::now();
                while done < cap {
                    // The last batch stops at the cap: a clock may end a search early, never
                    // carry it past the playouts its caller allows.
                    let batch = (cap - done).min(64);
                    for i in 0..batch {
                        if i > 0 && self.budget_spent(i as u32) {
                            break;
                        }
                        self.iterate(rng);
                        done += 1;
                    }
                    if start.elapsed() >= budget
                        || self.budget_spent(0)
                        || self.nodes.len() + 64 >= MAX_TREE_NODES
                    {
                        break;
                    }
                }
            }
        }
        done
    }
}

impl Agent for Mcts {
    fn choose(&mut self, pos: &Position, rng: &mut GameRng) -> Decision {
        let legal = pos.legal_moves();
        if legal.len() == 1 {
            let mv = legal.into_iter().next().expect("one legal move");
            return Decision {
                mv,
                nodes: 0,
                playouts: 0,
                value: None,
            };
        }
        self.set_root(pos);
        let tree_before = self.nodes.len();
        let playouts = self.search(rng);

        let mut children: Vec<(usize, u32, u32)> = Vec::with_capacity(legal.len());
        let mut child = self.nodes[0].first_child;
        while child != NONE {
            let n = &self.nodes[child as usize];
            children.push((n.mv as usize, n.visits, n.half_points));
            child = n.next_sibling;
        }
        children.sort_unstable();
        let most = children.iter().map(|c| c.1).max().unwrap_or(0);
        let best: Vec<usize> = children
            .iter()
            .filter(|c| c.1 == most)
            .map(|c| c.0)
            .collect();
        let mv = if best.is_empty() {
            // Not reachable with at least one iteration; stay legal regardless.
            legal.into_iter().next().expect("a legal move")
        } else {
            self.ties.pick(&best, rng)
        };
        let value = children
            .iter()
            .find(|c| c.0 == mv && c.1 > 0)
            .map(|c| MoveValue::PlayoutScore(c.2 as f32 / (2 * c.1) as f32));
        // With reuse the tree kept from earlier moves is not this move's work.
        let nodes = self.nodes.len().saturating_sub(tree_before) as u64;
        if !self.reuse {
            self.nodes.clear();
        }
        Decision {
            mv,
            nodes,
            playouts,
            value,
        }
    }

    fn set_budget(&mut self, budget: &Budget) {
        self.budget = Some(budget.clone());
        self.max_playouts = budget.max_playouts();
    }
}

/// South's result in half points (2 win, 1 draw, 0 loss) of a finished game.
#[inline]
fn half_points_south(pos: &Position) -> u32 {
    let (south, north) = pos.final_stores();
    match south.cmp(&north) {
        std::cmp::Ordering::Greater => 2,
        std::cmp::Ordering::Equal => 1,
        std::cmp::Ordering::Less => 0,
    }
}

/// A uniformly random move of a non-empty move bit set.
#[inline]
fn random_bit(mut bits: u16, rng: &mut GameRng) -> usize {
    let k = rng.random_range(0..bits.count_ones());
    for _ in 0..k {
        bits &= bits - 1;
    }
    bits.trailing_zeros() as usize + 1
}

/// Plays `pos` to the end with epsilon-greedy moves; South's result in half points.
fn playout(mut pos: Position, rules: Rules, epsilon: f64, rng: &mut GameRng) -> u32 {
    // Compare raw 32-bit draws with a fixed threshold instead of making a float per step.
    let threshold = (epsilon.clamp(0.0, 1.0) * 4_294_967_296.0) as u64;
    loop {
        let moves = pos.nonempty_pits().0;
        let mv = if (rng.random::<u32>() as u64) < threshold {
            random_bit(moves, rng)
        } else {
            greedy_move(&pos, moves, rules, rng)
        };
        if pos.play_unchecked(mv, rules).game_over {
            return half_points_south(&pos);
        }
    }
}

/// Whether move `mv`'s last seed lands in the mover's store (an extra turn, unless the move
/// ends the game).
#[inline]
fn ends_in_store(pos: &Position, mv: usize) -> bool {
    let m = pos.pits();
    let s = pos.pit(pos.side_to_move(), mv) as usize;
    (mv - 1 + s) % (2 * m + 1) == m
}

/// Extra turns a playout's greedy step looks through. Playouts are meant to be cheap: chains
/// longer than this are rare in play (a few positions of 7x7 boards late in a game), and
/// there the greedy step stops counting.
const MAX_CHAIN: u32 = 12;

/// Seeds the side to move can put in its store this turn with `mv`, chaining extra turns:
/// the greedy agent's measure, which Hunter's epsilon-greedy playouts follow. Only moves that
/// earn an extra turn are played to look further; the rest are counted from the pit counts.
/// Counting chains is what makes the playouts informative: with the immediate gain alone
/// (an extra turn worth its one sown seed) `mcts:4000` won 81% against greedy moving first
/// and scored 44% against `minimax:4`; with chains, 89% and 71% (docs/results/reproductions.md).
fn chain_gain(pos: &Position, mv: usize, rules: Rules, depth: u32) -> u32 {
    let gain = immediate_gain(pos, mv, rules);
    if depth == 0 || !ends_in_store(pos, mv) {
        return gain;
    }
    let mut child = *pos;
    if child.play_unchecked(mv, rules).game_over {
        return gain;
    }
    let mut best = 0;
    let mut bits = child.nonempty_pits().0;
    while bits != 0 {
        let next = bits.trailing_zeros() as usize + 1;
        bits &= bits - 1;
        best = best.max(chain_gain(&child, next, rules, depth - 1));
    }
    gain + best
}

/// The move with the largest [`chain_gain`], ties at random.
#[inline]
fn greedy_move(pos: &Position, moves: u16, rules: Rules, rng: &mut GameRng) -> usize {
    let mut best_gain = 0;
    let mut best = 0u16;
    let mut bits = moves;
    while bits != 0 {
        let mv = bits.trailing_zeros() as usize + 1;
        bits &= bits - 1;
        // The pie rule's swap sows nothing: no gain (and no pit to read).
        let gain = if mv == SWAP {
            0
        } else {
            chain_gain(pos, mv, rules, MAX_CHAIN)
        };
        if gain > best_gain {
            best_gain = gain;
            best = 1 << (mv - 1);
        } else if gain == best_gain {
            best |= 1 << (mv - 1);
        }
    }
    random_bit(best, rng)
}

/// Seeds move `mv` puts into the mover's store (sown seeds and a capture), worked out from the
/// pit counts without playing the move; the end-of-game sweep is not counted. An extra turn
/// counts as its sown seed only: playouts are meant to be cheap, not clever.
#[inline]
pub(crate) fn immediate_gain(pos: &Position, mv: usize, rules: Rules) -> u32 {
    let m = pos.pits();
    let cycle = 2 * m + 1;
    let side = pos.side_to_move();
    let first = pos.first_pit(side);
    let o = mv - 1;
    let s = pos.pit(side, mv) as usize;
    // Seeds go to offsets o+1..=o+s of the mover's cycle (0..m its pits, m its store, m+1..2m
    // the opponent's pits); the store is passed once a lap.
    let end = o + s;
    let mut gain = if end >= m { (end - m) / cycle + 1 } else { 0 };
    let last = end % cycle;
    if last < m && s <= cycle {
        // The landing pit was empty before (the pit sown from counts as empty), so it holds
        // the last seed alone: a capture of it and the seeds opposite.
        let before = if last == o {
            0
        } else {
            pos.cells()[first + last]
        };
        if before == 0 {
            let opposite_offset = 2 * m - last;
            let opposite = pos.cells()[pos.opposite(first + last)] as usize
                + usize::from(opposite_offset - o <= s);
            if opposite > 0 || rules == Rules::EmptyCapture {
                gain += opposite + 1;
            }
        }
    }
    gain as u32
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agents::rng_from_seed;

    /// A cancel from another thread stops a long search (a million playouts on Kalah(12,8))
    /// at the next playout, with or without a clock of its own.
    #[test]
    fn a_cancel_stops_the_playouts_at_once() {
        for time in [None, Some(Duration::from_secs(60))] {
            let mut agent = Mcts::new(Rules::Standard, 1_000_000, 0.7, 0.1);
            agent.time = time;
            let budget = Budget::unlimited();
            agent.set_budget(&budget);
            let canceller = std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(200));
                budget.cancel();
                Instant::now()
            });
            let decision = agent.choose(&Position::start(12, 8).unwrap(), &mut rng_from_seed(1));
            let returned = Instant::now();
            let cancelled = canceller.join().unwrap();
            let took = returned.saturating_duration_since(cancelled);
            assert!(
                took < Duration::from_secs(1),
                "{time:?}: {took:?} after the cancel"
            );
            assert!(decision.playouts < 1_000_000);
        }
    }

    #[test]
    fn a_time_budget_never_lifts_the_callers_playout_cap() {
        let mut agent = Mcts::new(Rules::Standard, 4000, 0.7, 0.1);
        agent.time = Some(Duration::from_secs(60));
        agent.set_budget(&Budget::unlimited().with_max_playouts(1000));
        let start = Instant::now();
        let decision = agent.choose(&Position::start(6, 4).unwrap(), &mut rng_from_seed(1));
        assert!(
            decision.playouts > 0 && decision.playouts <= 1000,
            "{}",
            decision.playouts
        );
        assert!(start.elapsed() < Duration::from_secs(30));
        // The API's move budget carries the API's cap, which its spec check also applies.
        let api = Profile::Api.limits();
        assert_eq!(
            api.move_budget().max_playouts(),
            u64::from(api.max_mcts_iterations)
        );
        assert_eq!(
            api.match_budget().max_playouts(),
            u64::from(api.max_mcts_iterations)
        );
    }

    #[test]
    fn immediate_gain_matches_playing_the_move() {
        let mut rng = rng_from_seed(3);
        let mut checked = 0;
        for (m, n) in [(6, 4), (6, 6), (4, 3), (1, 2), (3, 12), (12, 2), (6, 20)] {
            for rules in [Rules::Standard, Rules::EmptyCapture] {
                for _ in 0..40 {
                    let mut pos = Position::start(m, n).unwrap();
                    while !pos.is_game_over() {
                        let side = pos.side_to_move();
                        for mv in pos.legal_moves() {
                            let mut child = pos;
                            let outcome = child.play_unchecked(mv, rules);
                            if !outcome.game_over {
                                assert_eq!(
                                    immediate_gain(&pos, mv, rules),
                                    child.store(side) - pos.store(side),
                                    "move {mv} in {pos} ({rules})"
                                );
                                checked += 1;
                            }
                        }
                        let mv = random_bit(pos.legal_moves().0, &mut rng);
                        pos.play_unchecked(mv, rules);
                    }
                }
            }
        }
        assert!(checked > 10_000);
    }

    /// Seeds this turn with up to `depth` extra turns chained, by playing every move (the
    /// greedy agent's way); `None` when a chain ends the game, where the sweep would count too.
    fn played_chain_gain(pos: &Position, mv: usize, rules: Rules, depth: u32) -> Option<u32> {
        let side = pos.side_to_move();
        let mut child = *pos;
        let outcome = child.play_unchecked(mv, rules);
        if outcome.game_over {
            return None;
        }
        let now = child.store(side) - pos.store(side);
        if !outcome.extra_turn || depth == 0 {
            return Some(now);
        }
        let mut best = 0;
        for next in child.legal_moves() {
            best = best.max(played_chain_gain(&child, next, rules, depth - 1)?);
        }
        Some(now + best)
    }

    #[test]
    fn chain_gain_matches_playing_out_the_extra_turns() {
        let mut rng = rng_from_seed(5);
        let (mut checked, mut chained) = (0, 0);
        for (m, n) in [(6, 4), (6, 6), (4, 3), (7, 7), (3, 12)] {
            for rules in [Rules::Standard, Rules::EmptyCapture] {
                for _ in 0..30 {
                    let mut pos = Position::start(m, n).unwrap();
                    while !pos.is_game_over() {
                        for mv in pos.legal_moves() {
                            if let Some(expected) = played_chain_gain(&pos, mv, rules, MAX_CHAIN) {
                                let gain = chain_gain(&pos, mv, rules, MAX_CHAIN);
                                assert_eq!(gain, expected, "move {mv} in {pos} ({rules})");
                                checked += 1;
                                chained += usize::from(gain > immediate_gain(&pos, mv, rules));
                            }
                        }
                        let mv = random_bit(pos.legal_moves().0, &mut rng);
                        pos.play_unchecked(mv, rules);
                    }
                }
            }
        }
        assert!(checked > 5_000 && chained > 500, "{checked} {chained}");
    }

    #[test]
    fn finds_the_only_winning_move() {
        // Move 1 sows its one seed into the empty pit 2 and captures the 10 seeds opposite:
        // 29 of 48 seeds, a won game whatever follows.
        let pos = crate::game::parse_kpn("1,0,0,0,0,3/18/0,0,0,0,10,1/15/S").unwrap();
        let mut agent = Mcts::new(Rules::Standard, 2000, DEFAULT_C, DEFAULT_EPSILON);
        let d = agent.choose(&pos, &mut rng_from_seed(1));
        assert_eq!(d.mv, 1, "{d:?}");
    }

    #[test]
    fn tree_reuse_keeps_the_subtree_and_plays_legal_moves() {
        let rules = Rules::Standard;
        let mut agent = Mcts::new(rules, 500, DEFAULT_C, DEFAULT_EPSILON);
        agent.reuse = true;
        let mut rng = rng_from_seed(7);
        let mut pos = Position::start(6, 4).unwrap();
        let mut reused = 0;
        while !pos.is_game_over() {
            let before = agent.nodes.len();
            let d = agent.choose(&pos, &mut rng);
            assert!(pos.is_legal(d.mv));
            if d.nodes > 0 && agent.nodes.len() > d.nodes as usize + 1 && before > 0 {
                reused += 1;
            }
            pos.play_unchecked(d.mv, rules);
            if !pos.is_game_over() {
                let mv = random_bit(pos.legal_moves().0, &mut rng);
                pos.play_unchecked(mv, rules);
            }
        }
        assert!(reused > 0);
    }
}
