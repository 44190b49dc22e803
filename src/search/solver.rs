//! The exact solver: the value of a position under perfect play by both sides.
//!
//! The value of a position depends only on its pits and the side to move, not on the stores,
//! so the solver searches the margin the side to move will *gain from here* and the caller
//! adds the current store difference. That keeps transpositions that differ only in stores
//! together (the pie rule's swap offer is the one exception, see [`Solver::search`]). With the
//! pie rule a swap is one more move; as [`crate::game::SWAP`] relabels the board, the value
//! of the position after it is negated like that of any move that passes the turn. The
//! search is MTD(f): null-window alpha-beta probes over a transposition table
//! that keeps a lower and an upper bound per position, converging on the exact value.

use std::sync::Arc;

use super::{Budget, Egdb};
use crate::game::{Position, Rules, SWAP};

/// The most the side to move can gain from here, and the most it can lose: every seed left in
/// the pits, and with the swap on offer also the stores it would exchange.
#[inline]
fn gain_bound(pos: &Position) -> i32 {
    let pits = pos.seeds_in_pits() as i32;
    if pos.swap_available() {
        pits + 2 * (pos.total_seeds() as i32 - pits)
    } else {
        pits
    }
}

/// Counters of one solve.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SolverStats {
    pub nodes: u64,
    pub probes: u32,
}

/// One table slot as three words, `[key high, key low, meta]`, so that a fresh table is
/// all-zero memory the allocator hands out lazily (allocating a big table costs nothing until
/// it is used). A key of 0 marks an empty slot: no position that is still being searched has
/// all pits empty.
type Slot = [u64; 3];

/// The non-key part of a slot.
#[derive(Clone, Copy)]
struct Meta {
    lower: i16,
    upper: i16,
    /// Seeds in the pits: a proxy for the work the entry saves, used for replacement.
    work: u16,
    side: u8,
    best: u8,
}

impl Meta {
    #[inline]
    fn pack(self) -> u64 {
        (self.lower as u16 as u64)
            | (self.upper as u16 as u64) << 16
            | (self.work as u64) << 32
            | (self.side as u64) << 48
            | (self.best as u64) << 56
    }
    #[inline]
    fn unpack(word: u64) -> Meta {
        Meta {
            lower: word as u16 as i16,
            upper: (word >> 16) as u16 as i16,
            work: (word >> 32) as u16,
            side: (word >> 48) as u8,
            best: (word >> 56) as u8,
        }
    }
}

#[inline]
fn slot_key(slot: &Slot) -> u128 {
    (slot[0] as u128) << 64 | slot[1] as u128
}

/// An exact solver with its transposition table; reuse it across calls on the same rules to
/// keep what it learned.
pub struct Solver {
    rules: Rules,
    table: Vec<Slot>,
    mask: usize,
    used: usize,
    max_log2: u32,
    nodes: u64,
    total_nodes: u64,
    /// The caller's bounds, when it has any ([`Solver::set_budget`]).
    budget: Option<Budget>,
    aborted: bool,
    /// Exact values of every position with few seeds left, read instead of searched.
    egdb: Option<Arc<Egdb>>,
    /// Most seeds in the pits the database answers for (0 without one), checked before the
    /// lookup so that positions above it pay one comparison.
    egdb_seeds: u32,
    egdb_hits: u64,
    /// Most positions one call of [`Solver::best_moves_within`] may visit.
    node_cap: u64,
}

const BUCKET: usize = 4;

impl Solver {
    /// A solver whose table starts small and doubles as it fills, up to `2^max_log2` slots of
    /// 24 bytes each (2^24 slots take 400 MB).
    pub fn new(rules: Rules, max_log2: u32) -> Solver {
        let max_log2 = max_log2.clamp(8, 30);
        let size = 1usize << max_log2.min(14);
        Solver {
            rules,
            table: vec![[0u64; 3]; size],
            mask: size - 1,
            used: 0,
            max_log2,
            nodes: 0,
            total_nodes: 0,
            budget: None,
            aborted: false,
            egdb: None,
            egdb_seeds: 0,
            egdb_hits: 0,
            node_cap: u64::MAX,
        }
    }

    /// Reads exact values from `egdb` for the positions it covers instead of searching them.
    /// A database of other rules or another board is ignored for the positions it does not
    /// cover ([`Egdb::gain`] checks each).
    pub fn set_egdb(&mut self, egdb: Arc<Egdb>) {
        if egdb.rules() == self.rules {
            self.egdb_seeds = egdb.max_seeds();
            self.egdb = Some(egdb);
        }
    }

    /// The database this solver reads, if any.
    pub fn egdb(&self) -> Option<&Arc<Egdb>> {
        self.egdb.as_ref()
    }

    /// Positions answered by the database since the solver was made.
    pub fn egdb_hits(&self) -> u64 {
        self.egdb_hits
    }

    /// The database's gain for `pos`, when it covers it.
    #[inline]
    fn egdb_gain(&mut self, pos: &Position) -> Option<i32> {
        if pos.seeds_in_pits() > self.egdb_seeds {
            return None;
        }
        let gain = self.egdb.as_ref()?.gain(pos)?;
        self.egdb_hits += 1;
        Some(gain)
    }

    /// Solves from now on stop once `budget` is spent; a stopped solve's values and moves
    /// mean nothing and nothing of it enters the table, so the owner discards the result
    /// ([`Budget::stopped`]).
    pub fn set_budget(&mut self, budget: &Budget) {
        self.budget = budget.is_bounded().then(|| budget.clone());
    }

    /// A solver whose table may grow to 400 MB.
    pub fn with_default_table(rules: Rules) -> Solver {
        Solver::new(rules, 24)
    }

    /// Kept for callers that size by the seeds in play; the table grows on demand anyway.
    pub fn for_seeds(rules: Rules, _seeds: u32) -> Solver {
        Solver::with_default_table(rules)
    }

    /// Doubles the table and re-inserts what it holds.
    fn grow(&mut self) {
        let old = std::mem::take(&mut self.table);
        let size = old.len() * 2;
        self.table = vec![[0u64; 3]; size];
        self.mask = size - 1;
        self.used = 0;
        for slot in old {
            let key = slot_key(&slot);
            if key != 0 {
                let meta = Meta::unpack(slot[2]);
                self.insert(key, meta);
            }
        }
    }

    /// Positions searched since the solver was made.
    pub fn total_nodes(&self) -> u64 {
        self.total_nodes
    }

    pub fn rules(&self) -> Rules {
        self.rules
    }

    /// The exact value of `pos` for the side to move: its final store minus the other side's,
    /// counting the seeds already in the stores.
    pub fn solve(&mut self, pos: &Position) -> (i32, SolverStats) {
        let (gain, stats) = self.solve_gain(pos);
        (pos.store_diff(pos.side_to_move()) + gain, stats)
    }

    /// The margin the side to move gains from here under perfect play.
    pub fn solve_gain(&mut self, pos: &Position) -> (i32, SolverStats) {
        self.nodes = 0;
        self.aborted = false;
        if pos.is_game_over() {
            let me = pos.side_to_move();
            let gain = pos.seeds_on_side(me) as i32 - pos.seeds_on_side(me.opponent()) as i32;
            return (gain, SolverStats::default());
        }
        if let Some(gain) = self.egdb_gain(pos) {
            return (gain, SolverStats::default());
        }
        let bound = gain_bound(pos);
        let mut lower = -bound;
        let mut upper = bound;
        let mut guess = 0;
        let mut probes = 0;
        while lower < upper && !self.aborted {
            let beta = if guess == lower { guess + 1 } else { guess };
            let value = self.search(pos, beta - 1, beta);
            probes += 1;
            if value < beta {
                upper = value;
            } else {
                lower = value;
            }
            guess = value;
        }
        (
            lower,
            SolverStats {
                nodes: self.nodes,
                probes,
            },
        )
    }

    /// The exact value of `pos` (as in [`Solver::solve`]) and every move that keeps it.
    ///
    /// Proving that a move keeps the value takes one null-window probe, far cheaper than
    /// solving each move exactly (a position's value can be much easier to prove than the exact
    /// value of a poor move).
    pub fn best_moves(&mut self, pos: &Position) -> (i32, Vec<usize>) {
        let (gain, _) = self.solve_gain(pos);
        let value = pos.store_diff(pos.side_to_move()) + gain;
        if pos.is_game_over() {
            return (value, Vec::new());
        }
        let me = pos.side_to_move();
        let before = pos.store_diff(me);
        let mut best = Vec::new();
        for mv in pos.legal_moves() {
            let mut child = *pos;
            let outcome = child.play_unchecked(mv, self.rules);
            let step = child.store_diff(me) - before;
            let keeps = if outcome.game_over {
                step >= gain
            } else if outcome.extra_turn {
                // Need step + v(child) >= gain.
                let bound = gain - step;
                self.search(&child, bound - 1, bound) >= bound
            } else {
                // Need step - v(child) >= gain, i.e. v(child) <= step - gain.
                let bound = step - gain;
                self.search(&child, bound, bound + 1) <= bound
            };
            if keeps {
                best.push(mv);
            }
        }
        (value, best)
    }

    /// [`Solver::best_moves`] within `max_nodes` positions: `None` when the solve needs more
    /// (what it proved on the way stays in the table, so a later call goes further), or when
    /// the caller's budget stopped it.
    pub fn best_moves_within(
        &mut self,
        pos: &Position,
        max_nodes: u64,
    ) -> Option<(i32, Vec<usize>)> {
        self.node_cap = max_nodes;
        let found = self.best_moves(pos);
        self.node_cap = u64::MAX;
        (!self.aborted).then_some(found)
    }

    /// The exact value (as in [`Solver::solve`]) after each legal move of the side to move, from
    /// the mover's point of view. Each is a full solve: prefer [`Solver::best_moves`] to play.
    pub fn solve_moves(&mut self, pos: &Position) -> Vec<(usize, i32)> {
        let me = pos.side_to_move();
        pos.legal_moves()
            .into_iter()
            .map(|mv| {
                let mut child = *pos;
                child.play_unchecked(mv, self.rules);
                let (value, _) = self.solve(&child);
                let mine = if child.side_to_move() == me {
                    value
                } else {
                    -value
                };
                (mv, mine)
            })
            .collect()
    }

    /// Packs the pits exactly: 8 bits a pit when every pit holds under 256 seeds and there are
    /// at most 16 pits, which covers every position the solver can finish; otherwise a 128-bit
    /// mix of all pits (a false match then needs a 128-bit collision).
    #[inline]
    fn key(pos: &Position) -> u128 {
        let m = pos.pits();
        let cells = pos.cells();
        let fits = m <= 8 && cells.iter().all(|&c| c < 256);
        let mut key: u128 = 0;
        if fits {
            for &c in &cells[..m] {
                key = (key << 8) | c as u128;
            }
            for &c in &cells[m + 1..2 * m + 1] {
                key = (key << 8) | c as u128;
            }
            // Pits only; a position with all pits empty is never stored, so 0 means "empty".
            key
        } else {
            let mut a: u64 = 0x9e37_79b9_7f4a_7c15;
            let mut b: u64 = 0xc2b2_ae3d_27d4_eb4f;
            for (i, &c) in cells.iter().enumerate() {
                if i == m || i == 2 * m + 1 {
                    continue;
                }
                a = (a ^ c as u64).wrapping_mul(0x100_0000_01b3).rotate_left(17);
                b = (b ^ (c as u64 + i as u64)).wrapping_mul(0xff51_afd7_ed55_8ccd);
            }
            ((a as u128) << 64 | b as u128) | 1
        }
    }

    #[inline]
    fn slot(&self, key: u128, side: u8) -> usize {
        let h = (key as u64) ^ ((key >> 64) as u64) ^ (side as u64).wrapping_mul(0x9e37_79b9);
        let h = h.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        ((h >> 20) as usize) & self.mask & !(BUCKET - 1)
    }

    /// Null-window-friendly fail-soft alpha-beta on the gain from here. Kept in one piece: it
    /// is the solver's hot loop (table probe, move ordering, recursion, table store share the
    /// position and bounds), and helpers would have to pass all of that through every call.
    fn search(&mut self, pos: &Position, mut alpha: i32, mut beta: i32) -> i32 {
        self.nodes += 1;
        self.total_nodes += 1;
        if self.nodes & 0xfff == 0 {
            if let Some(budget) = &self.budget {
                self.aborted |= budget.check(self.nodes);
            }
            self.aborted |= self.nodes > self.node_cap;
        }
        if self.aborted {
            return 0;
        }
        if let Some(gain) = self.egdb_gain(pos) {
            return gain;
        }
        let seeds = gain_bound(pos);
        // The side to move can gain at most every seed left and lose at most all of them.
        if seeds <= alpha {
            return seeds;
        }
        if -seeds >= beta {
            return -seeds;
        }
        let key = Self::key(pos);
        // The pie state is part of what the value depends on. A swap-offer position's value
        // also depends on its stores (the swap hands them over), but the offer only follows
        // South's first move from a start, where the pits alone tell the position.
        let side = pos.side_to_move() as u8 | (pos.pie() as u8) << 1;
        let base = self.slot(key, side);
        let mut best_hint = 0u8;
        let mut found = None;
        for i in base..base + BUCKET {
            let slot = &self.table[i];
            if slot_key(slot) != key {
                continue;
            }
            let e = Meta::unpack(slot[2]);
            if e.side == side {
                found = Some(i);
                if e.lower >= beta as i16 {
                    return e.lower as i32;
                }
                if e.upper <= alpha as i16 {
                    return e.upper as i32;
                }
                alpha = alpha.max(e.lower as i32);
                beta = beta.min(e.upper as i32);
                best_hint = e.best;
                break;
            }
        }
        let original_alpha = alpha;
        let original_beta = beta;

        let me = pos.side_to_move();
        let m = pos.pits();
        let my_store = pos.store_index(me);
        let mut moves = [0u8; 16];
        let mut n = 0;
        if best_hint != 0 {
            moves[0] = best_hint;
            n = 1;
        }
        // Extra turns first (nearest the store first), then the rest by what they gain.
        let legal = pos.legal_moves();
        for mv in (1..=m).rev() {
            if legal.contains(mv) && mv as u8 != best_hint && pos.landing_cell(me, mv) == my_store {
                moves[n] = mv as u8;
                n += 1;
            }
        }
        // Moves that pass the turn by what they put in the store, captures above all, largest
        // first; equal ones stay nearest the store first (the sort is stable). On Kalah(6,4)
        // this cut a solve's nodes 2 to 6 fold against nearest-the-store order alone.
        let mut passing = [(0i32, 0u8); 16];
        let mut k = 0;
        for mv in (1..=m).rev() {
            if legal.contains(mv) && mv as u8 != best_hint && pos.landing_cell(me, mv) != my_store {
                let mut child = *pos;
                child.play_unchecked(mv, self.rules);
                passing[k] = (pos.store(me) as i32 - child.store(me) as i32, mv as u8);
                k += 1;
            }
        }
        passing[..k].sort_by_key(|&(loss, _)| loss);
        for &(_, mv) in &passing[..k] {
            moves[n] = mv;
            n += 1;
        }
        if legal.contains(SWAP) && SWAP as u8 != best_hint {
            moves[n] = SWAP as u8;
            n += 1;
        }

        let before = pos.store_diff(me);
        let mut best = i32::MIN;
        let mut best_move = 0u8;
        for &mv in &moves[..n] {
            let mut child = *pos;
            let outcome = child.play_unchecked(mv as usize, self.rules);
            let gain = child.store_diff(me) - before;
            let value = if outcome.game_over {
                gain
            } else if outcome.extra_turn {
                gain + self.search(&child, alpha - gain, beta - gain)
            } else {
                gain - self.search(&child, gain - beta, gain - alpha)
            };
            if self.aborted {
                return 0;
            }
            if value > best {
                best = value;
                best_move = mv;
                if best > alpha {
                    alpha = best;
                }
                if alpha >= beta {
                    break;
                }
            }
        }

        let (lower, upper) = if best <= original_alpha {
            (-seeds, best)
        } else if best >= original_beta {
            (best, seeds)
        } else {
            (best, best)
        };
        self.store(found, key, side, lower, upper, seeds as u16, best_move);
        best
    }

    #[allow(clippy::too_many_arguments)]
    fn store(
        &mut self,
        found: Option<usize>,
        key: u128,
        side: u8,
        lower: i32,
        upper: i32,
        work: u16,
        best: u8,
    ) {
        if let Some(i) = found {
            // The table may have been overwritten during the search below this node.
            let slot = &mut self.table[i];
            let mut e = Meta::unpack(slot[2]);
            if slot_key(slot) == key && e.side == side {
                e.lower = e.lower.max(lower as i16);
                e.upper = e.upper.min(upper as i16);
                e.best = best;
                slot[2] = e.pack();
                return;
            }
        }
        self.insert(
            key,
            Meta {
                lower: lower as i16,
                upper: upper as i16,
                work,
                side,
                best,
            },
        );
        if self.used * 4 > self.table.len() * 3 && self.table.len() < 1 << self.max_log2 {
            self.grow();
        }
    }

    /// Puts an entry in its bucket, over the slot that saves the least work.
    fn insert(&mut self, key: u128, meta: Meta) {
        let base = self.slot(key, meta.side);
        let mut victim = base;
        let mut victim_work = u16::MAX;
        for i in base..base + BUCKET {
            let slot = &self.table[i];
            if slot_key(slot) == 0 {
                victim = i;
                self.used += 1;
                break;
            }
            let w = Meta::unpack(slot[2]).work;
            if w < victim_work {
                victim = i;
                victim_work = w;
            }
        }
        self.table[victim] = [(key >> 64) as u64, key as u64, meta.pack()];
    }
}

/// The exact value of `pos` with a fresh solver sized for it.
pub fn solve(pos: &Position, rules: Rules) -> i32 {
    Solver::for_seeds(rules, pos.seeds_in_pits()).solve(pos).0
}
