//! Alpha-beta minimax to a fixed number of turns, or iterative deepening within a time
//! budget. Values are from the point of view of the side to move at the root ("me").

use std::cell::RefCell;
use std::time::{Duration, Instant};

use super::{Budget, Egdb};
use crate::eval::{terminal_score, Evaluator};
use crate::game::{Pie, Position, Rules, Side, SWAP};

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
///
/// Fixed-depth searches deepen iteratively and keep a transposition table, but both serve
/// only to order moves and to cut off with results of the very same position searched to the
/// very same remaining depth within the same search: the value and the set of best moves are
/// always exactly those of plain minimax.
pub struct AlphaBeta<'e, E: Evaluator> {
    eval: &'e E,
    rules: Rules,
    me: Side,
    nodes: u64,
    deadline: Option<Instant>,
    /// The caller's bounds (a request's deadline and node cap, a cancel), when it has any.
    budget: Option<Budget>,
    /// The positions this move's iterative deepening may visit ([`AlphaBeta::search_nodes`]).
    max_nodes: u64,
    aborted: bool,
    table: Option<Box<Table>>,
    /// Cutoffs by moves other than captures, per (maximizing?, move), weighted by the
    /// remaining depth.
    history: [[u32; 16]; 2],
    /// Exact values of the positions it covers, scored as finished games.
    egdb: Option<&'e Egdb>,
    /// The root is one of the pie rule's two special plies: leaves are scored
    /// [`zero_sum`]. See [`AlphaBeta::leaf`].
    zero_sum: bool,
}

/// Transposition table slots. Big enough for the GA's depth-7 searches, small enough to stay
/// in the L2 cache of one core.
const TABLE_BITS: u32 = 14;

const BOUND_NONE: u8 = 0;
const BOUND_EXACT: u8 = 1;
const BOUND_LOWER: u8 = 2;
const BOUND_UPPER: u8 = 3;

#[derive(Clone, Copy)]
struct Entry {
    /// The whole position ([`Position::key16`]), compared on every probe: a hash collision
    /// must never be able to change a result.
    key: u128,
    value: i64,
    /// The search that wrote the entry; entries of other searches count as empty, which
    /// makes every search behave as if it had a fresh table.
    search: u32,
    depth: u8,
    bound: u8,
    mv: u8,
}

struct Table {
    entries: Vec<Entry>,
    search: u32,
    /// The root side of the searches whose entries are visible: values are from its point
    /// of view, so a search for the other side must not see them.
    me: Option<Side>,
    /// Whether the visible entries were scored [`zero_sum`]: the same position has another
    /// value then, so searches of the other kind must not see them either.
    zero_sum: bool,
}

impl Table {
    fn new() -> Box<Table> {
        let empty = Entry {
            key: 0,
            value: 0,
            search: 0,
            depth: 0,
            bound: BOUND_NONE,
            mv: 0,
        };
        Box::new(Table {
            entries: vec![empty; 1 << TABLE_BITS],
            search: 0,
            me: None,
            zero_sum: false,
        })
    }

    /// Starts a new search: every entry written so far becomes invisible.
    fn next_search(&mut self) {
        self.search = self.search.wrapping_add(1);
        if self.search == 0 {
            for e in &mut self.entries {
                e.search = 0;
            }
            self.search = 1;
        }
    }
}

thread_local! {
    /// Tables to reuse on this thread: agents are built per game and search once per move,
    /// and allocating a table each time would cost more than a short search. A table taken
    /// from here starts a new search, so no one sees another's entries (see
    /// [`Entry::search`]).
    // Tables travel between searchers and agents as boxes; keeping them boxed here avoids
    // re-boxing on every hand-over.
    #[allow(clippy::vec_box)]
    static SPARE_TABLES: RefCell<Vec<Box<Table>>> = const { RefCell::new(Vec::new()) };
}

fn take_table() -> Box<Table> {
    let mut table = SPARE_TABLES
        .with(|t| t.borrow_mut().pop())
        .unwrap_or_else(Table::new);
    table.next_search();
    table.me = None;
    table
}

fn give_back(table: Box<Table>) {
    SPARE_TABLES.with(|t| {
        let mut spare = t.borrow_mut();
        // Two agents a game per thread is the common case; more is a rarity not worth memory.
        if spare.len() < 4 {
            spare.push(table);
        }
    });
}

/// A transposition table an agent keeps across the moves of one game (see
/// [`AlphaBeta::search_depth_keeping`]). Entries are exact facts about a position searched to
/// a remaining depth by one evaluator for one root side, so reusing them never changes a
/// result, only the work: after an extra turn or a reply, the new search finds most of its
/// shallower iterations already done.
#[derive(Default)]
pub struct KeptTable(Option<Box<Table>>);

impl Drop for KeptTable {
    fn drop(&mut self) {
        if let Some(table) = self.0.take() {
            give_back(table);
        }
    }
}

/// Move ordering classes, best first; within a class the larger key goes first. Captures
/// before extra turns cost fewer nodes than the other way round in the GA's games.
const CLASS_TABLE: u32 = 7;
const CLASS_CAPTURE: u32 = 5;
const CLASS_EXTRA: u32 = 4;
const CLASS_QUIET: u32 = 1;

/// Moves in the order alpha-beta should try them, as sort keys `class << 24 | score << 5 |
/// move`: the table's best move, then captures (biggest first), extra turns (nearest the
/// store first, as those disturb the fewest other pits), and the other moves by history.
#[inline]
fn ordered_moves<const EXTRAS: bool>(
    pos: &Position,
    rules: Rules,
    hint: u8,
    history: &[u32; 16],
    buf: &mut [u32; 16],
) -> usize {
    let side = pos.side_to_move();
    let m = pos.pits();
    let cells = pos.cells();
    let own = pos.side_pits(side);
    let cycle = 2 * m + 1;
    let capture_key = |land: usize, wraps: bool| {
        // The last seed lands alone in the mover's pit at offset `land`; the pit facing it
        // gains a seed on the way when the sowing wraps round.
        let opposite = 2 * m - (pos.first_pit(side) + land);
        let taken = cells[opposite] as u32 + wraps as u32;
        if taken > 0 || rules == Rules::EmptyCapture {
            Some(CLASS_CAPTURE << 24 | taken.min(1 << 18) << 5)
        } else {
            None
        }
    };
    let mut n = 0;
    for (i, &seeds) in own.iter().enumerate() {
        if seeds == 0 {
            continue;
        }
        let mv = i + 1;
        let seeds = seeds as usize;
        let land = i + seeds;
        let key = if mv as u8 == hint {
            Some(CLASS_TABLE << 24)
        } else if land == m {
            Some(CLASS_EXTRA << 24)
        } else if land < m {
            if own[land] == 0 {
                capture_key(land, false)
            } else {
                None
            }
        } else if land < cycle {
            // Ends on the opponent's side.
            None
        } else {
            // A lap or more: rare, so the division does not matter here.
            let land = land % cycle;
            if land == m {
                Some(CLASS_EXTRA << 24)
            } else if land < m && seeds <= cycle && (own[land] == 0 || seeds == cycle) {
                capture_key(land, true)
            } else {
                None
            }
        };
        let key = key.unwrap_or(CLASS_QUIET << 24 | history[i].min(1 << 18) << 5);
        buf[n] = key | mv as u32;
        n += 1;
    }
    if EXTRAS && pos.swap_available() {
        // The pie rule's swap: one more option, ordered like a quiet move (SWAP fits the
        // five move bits of the key and the 16-entry history).
        let key = if SWAP as u8 == hint {
            CLASS_TABLE << 24
        } else {
            CLASS_QUIET << 24 | history[SWAP - 1].min(1 << 18) << 5
        };
        buf[n] = key | SWAP as u32;
        n += 1;
    }
    // Insertion sort: at most a dozen moves.
    for i in 1..n {
        let key = buf[i];
        let mut j = i;
        while j > 0 && buf[j - 1] < key {
            buf[j] = buf[j - 1];
            j -= 1;
        }
        buf[j] = key;
    }
    n
}

/// The moves of the side to move as bit sets (bit `k - 1` for move `k`): those ending in
/// its store, those capturing, and the rest. The cheap ordering of the frontier.
// Inlined into the frontier, its one caller: as a call it cost 5% of a depth-6 search in
// saving and restoring registers.
#[inline(always)]
fn move_classes<const EXTRAS: bool>(pos: &Position, rules: Rules) -> [u16; 3] {
    let side = pos.side_to_move();
    let m = pos.pits();
    let cells = pos.cells();
    let own = pos.side_pits(side);
    let first = pos.first_pit(side);
    let cycle = 2 * m + 1;
    // Branches on each pit's landing: a branch-free version (bit operations on the pits'
    // masks) mispredicted a third as often but ran 18% more instructions at depth 6.
    let (mut extra, mut capture, mut quiet) = (0u16, 0u16, 0u16);
    for (i, &seeds) in own.iter().enumerate() {
        if seeds == 0 {
            continue;
        }
        let bit = 1 << i;
        let land = i + seeds as usize;
        if land == m {
            extra |= bit;
        } else if land < m
            && own[land] == 0
            && (rules == Rules::EmptyCapture || cells[2 * m - (first + land)] > 0)
        {
            capture |= bit;
        } else if land >= cycle && land % cycle == m {
            extra |= bit;
        } else {
            quiet |= bit;
        }
    }
    // The pie rule's swap, when offered, counts among the quiet moves.
    if EXTRAS {
        quiet |= (pos.swap_available() as u16) << (SWAP - 1);
    }
    [extra, capture, quiet]
}

/// A search stopped by the caller's budget before its first move was valued still names a
/// legal move: agents must always answer, and the budget's owner discards the result.
fn any_move_if_stopped(pos: &Position, result: &mut SearchResult) {
    if result.best_moves.is_empty() {
        result.best_moves = pos.legal_moves().into_iter().take(1).collect();
    }
}

impl<'e, E: Evaluator> AlphaBeta<'e, E> {
    pub fn new(eval: &'e E, rules: Rules) -> Self {
        AlphaBeta {
            eval,
            rules,
            me: Side::South,
            nodes: 0,
            deadline: None,
            budget: None,
            max_nodes: u64::MAX,
            aborted: false,
            table: None,
            history: [[0; 16]; 2],
            egdb: None,
            zero_sum: false,
        }
    }

    /// Scores every position `egdb` covers by its exact value, as a finished game with that
    /// margin, instead of searching or evaluating it: endgames are then played perfectly. A
    /// database of other rules is ignored.
    pub(crate) fn set_egdb(&mut self, egdb: &'e Egdb) {
        if egdb.rules() == self.rules {
            self.egdb = Some(egdb);
        }
    }

    /// The exact score of `pos` from the database, from the root mover's point of view.
    #[inline]
    fn exact<const EXTRAS: bool>(&self, pos: &Position) -> Option<i64> {
        if !EXTRAS {
            return None;
        }
        let margin = self.egdb?.value(pos)?;
        let mine = if pos.side_to_move() == self.me {
            margin
        } else {
            -margin
        };
        Some(terminal_score(mine))
    }

    /// Searches from now on stop once `budget` is spent or cancelled (its stop flag is read at
    /// every node). A fixed-depth search stopped so returns a legal move but not a minimax
    /// result: the budget's owner must look at [`Budget::stopped`] and discard it. A timed
    /// search stops deepening as at its own deadline.
    pub(crate) fn set_budget(&mut self, budget: &Budget) {
        self.budget = Some(budget.clone());
    }

    /// Resets everything one search may leave behind, so that each search gives the same
    /// result as on a fresh searcher. With `keep`, entries of earlier searches for the same
    /// root side stay visible: they are exact for their depth, so results do not change.
    fn begin(&mut self, pos: &Position, depth: u32, keep: bool) {
        self.me = pos.side_to_move();
        self.zero_sum = pos.pie() != Pie::Off;
        self.nodes = 0;
        self.deadline = None;
        self.aborted = false;
        self.history = [[0; 16]; 2];
        // Boards whose positions do not fit the table's exact keys search without it.
        if pos.fits_key16() && depth <= u8::MAX as u32 {
            let (me, zero_sum) = (self.me, self.zero_sum);
            let table = self.table.get_or_insert_with(take_table);
            if !keep || table.me != Some(me) || table.zero_sum != zero_sum {
                table.next_search();
                table.me = Some(me);
                table.zero_sum = zero_sum;
            }
        } else if let Some(table) = self.table.take() {
            give_back(table);
        }
    }

    /// Searches `depth` turns from `pos`, which must not be over.
    pub fn search_depth(&mut self, pos: &Position, depth: u32) -> SearchResult {
        self.search_depth_with(pos, depth, false)
    }

    /// [`AlphaBeta::search_depth`] reusing the entries `kept` holds from earlier searches of
    /// the same evaluator, and keeping this search's for the next. The result is the same;
    /// only the work shrinks. `kept` must only ever be used with one evaluator.
    pub fn search_depth_keeping(
        &mut self,
        pos: &Position,
        depth: u32,
        kept: &mut KeptTable,
    ) -> SearchResult {
        if let Some(table) = kept.0.take() {
            if let Some(old) = self.table.replace(table) {
                give_back(old);
            }
        }
        let result = self.search_depth_with(pos, depth, true);
        kept.0 = self.table.take();
        result
    }

    fn search_depth_with(&mut self, pos: &Position, depth: u32, keep: bool) -> SearchResult {
        let depth = depth.max(1);
        self.begin(pos, depth, keep);
        // Shallower iterations cost a fraction of the last one and fill the table with the
        // best moves to try first. Only depths of the same parity: a turn more or less
        // changes who moved last before the horizon, and with it the best moves, so
        // alternate depths order worse and cost more than they save.
        let mut d = 2 - depth % 2;
        while d < depth {
            self.root(pos, d, false);
            d += 2;
        }
        let mut result = self.root(pos, depth, true);
        result.nodes = self.nodes;
        any_move_if_stopped(pos, &mut result);
        result
    }

    /// Iterative deepening until the search has visited `max_nodes` positions (tested every
    /// 4096) or reached `max_depth`; returns the deepest completed iteration. At least depth
    /// 1 always completes. Unlike `AlphaBeta::search_time` the result depends only on the
    /// position, so games with node budgets reproduce.
    pub fn search_nodes(&mut self, pos: &Position, max_nodes: u64, max_depth: u32) -> SearchResult {
        let max_depth = max_depth.max(1);
        self.begin(pos, max_depth, false);
        let mut best = self.root(pos, 1, true);
        self.max_nodes = max_nodes;
        for depth in 2..=max_depth {
            let result = self.root(pos, depth, true);
            if self.aborted {
                break;
            }
            best = result;
            if crate::eval::is_decisive(best.value) {
                break;
            }
        }
        self.max_nodes = u64::MAX;
        best.nodes = self.nodes;
        any_move_if_stopped(pos, &mut best);
        best
    }

    /// Iterative deepening until `budget` runs out (or `max_depth` is reached); returns the
    /// deepest completed iteration. At least depth 1 always completes.
    pub(crate) fn search_time(
        &mut self,
        pos: &Position,
        budget: Duration,
        max_depth: u32,
    ) -> SearchResult {
        let start = Instant::now();
        let max_depth = max_depth.max(1);
        self.begin(pos, max_depth, false);
        let mut best = self.root(pos, 1, true);
        for depth in 2..=max_depth {
            self.deadline = Some(start + budget);
            let result = self.root(pos, depth, true);
            if self.aborted {
                break;
            }
            best = result;
            // A decided game will not change with more depth.
            if crate::eval::is_decisive(best.value) || start.elapsed() >= budget {
                break;
            }
        }
        best.nodes = self.nodes;
        any_move_if_stopped(pos, &mut best);
        best
    }

    /// The value of a position just reached by a move, `depth` turns from the horizon.
    #[inline]
    fn child_value<const EXTRAS: bool>(
        &mut self,
        child: &Position,
        game_over: bool,
        depth: u32,
        alpha: i64,
        beta: i64,
    ) -> i64 {
        if game_over || depth == 0 {
            self.horizon::<EXTRAS>(child, game_over)
        } else if let Some(exact) = self.exact::<EXTRAS>(child) {
            self.nodes += 1;
            exact
        } else {
            self.search::<EXTRAS>(child, depth, alpha, beta)
        }
    }

    /// The value of a position reached on the horizon, or of a finished game, counted as a
    /// node. Inlined into the frontier, where most positions are valued: a call there cost
    /// more than the evaluation.
    #[inline(always)]
    fn horizon<const EXTRAS: bool>(&mut self, child: &Position, game_over: bool) -> i64 {
        self.nodes += 1;
        if game_over {
            // The sweep has emptied every pit: the stores are final.
            terminal_score(child.store_diff(self.me))
        } else if let Some(exact) = self.exact::<EXTRAS>(child) {
            exact
        } else {
            self.leaf::<EXTRAS>(child)
        }
    }

    /// The evaluation of a leaf for the root mover; [`zero_sum`] under a pie-rule root.
    #[inline]
    fn leaf<const EXTRAS: bool>(&self, pos: &Position) -> i64 {
        if EXTRAS && self.zero_sum {
            zero_sum(self.eval, pos, self.me)
        } else {
            self.eval.evaluate(pos, self.me)
        }
    }

    /// Values every root move. With `prove_ties` the best value and every move that reaches
    /// it are exact; without, only the first best move is (enough to order the next
    /// iteration).
    fn root(&mut self, pos: &Position, depth: u32, prove_ties: bool) -> SearchResult {
        // An endgame database and a pie-rule root each add a test at every node. The search
        // is compiled twice so that the ordinary one, which has neither, carries none of
        // them: `EXTRAS` is false unless the search has one of the two.
        if self.egdb.is_some() || self.zero_sum {
            self.root_with::<true>(pos, depth, prove_ties)
        } else {
            self.root_with::<false>(pos, depth, prove_ties)
        }
    }

    fn root_with<const EXTRAS: bool>(
        &mut self,
        pos: &Position,
        depth: u32,
        prove_ties: bool,
    ) -> SearchResult {
        self.nodes += 1;
        let key = pos.key16();
        let hint = self.probe(key).map_or(0, |e| e.mv);
        let mut buf = [0u32; 16];
        let n = ordered_moves::<EXTRAS>(pos, self.rules, hint, &self.history[1], &mut buf);
        let mut best_value = i64::MIN;
        let mut best_moves: Vec<usize> = Vec::new();
        for (i, &key) in buf[..n].iter().enumerate() {
            let mv = (key & 0x1f) as usize;
            let mut child = *pos;
            let outcome = child.play_unchecked(mv, self.rules);
            let child_depth = if outcome.extra_turn { depth } else { depth - 1 };
            // Later moves first try a null window just below (or at) the best so far: most
            // are worse and fail low cheaply. Those that do not are searched again with the
            // window open above, which values them exactly.
            let floor = if prove_ties {
                best_value.saturating_sub(1)
            } else {
                best_value
            };
            let value = if i == 0 || outcome.game_over || child_depth == 0 {
                self.child_value::<EXTRAS>(&child, outcome.game_over, child_depth, floor, i64::MAX)
            } else {
                let v = self.search::<EXTRAS>(&child, child_depth, floor, floor + 1);
                if v > floor {
                    self.search::<EXTRAS>(&child, child_depth, floor, i64::MAX)
                } else {
                    v
                }
            };
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
        if !self.aborted {
            if let Some(&mv) = best_moves.first() {
                self.store(key, depth, best_value, BOUND_NONE, mv as u8);
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

    #[inline]
    fn slot(key: u128) -> usize {
        let folded = (key as u64) ^ ((key >> 64) as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        (folded.wrapping_mul(0xbf58_476d_1ce4_e5b9) >> (64 - TABLE_BITS)) as usize
    }

    #[inline]
    fn probe(&self, key: u128) -> Option<&Entry> {
        let table = self.table.as_deref()?;
        let e = &table.entries[Self::slot(key)];
        (e.search == table.search && e.key == key).then_some(e)
    }

    #[inline]
    fn store(&mut self, key: u128, depth: u32, value: i64, bound: u8, mv: u8) {
        if let Some(table) = self.table.as_deref_mut() {
            let search = table.search;
            table.entries[Self::slot(key)] = Entry {
                key,
                value,
                search,
                depth: depth as u8,
                bound,
                mv,
            };
        }
    }

    /// Fail-soft alpha-beta on a position that is not over, `depth >= 1` turns from the
    /// horizon. A result `<= alpha` is an upper bound, `>= beta` a lower bound, and exact in
    /// between.
    #[inline]
    fn search<const EXTRAS: bool>(
        &mut self,
        pos: &Position,
        depth: u32,
        alpha: i64,
        beta: i64,
    ) -> i64 {
        if let Some(exact) = self.exact::<EXTRAS>(pos) {
            return exact;
        }
        if depth == 1 {
            self.frontier::<EXTRAS>(pos, alpha, beta)
        } else {
            self.node::<EXTRAS>(pos, depth, alpha, beta)
        }
    }

    /// Counts a node and says whether the search must stop. The clock and the owner's stop
    /// flag are read once every 4096 nodes: reading them costs more than searching a leaf,
    /// and a cancelled game's search still ends within a millisecond, however deep.
    #[inline(always)]
    fn enter(&mut self) -> bool {
        self.nodes += 1;
        if self.nodes & 0xfff == 0 {
            self.look_at_the_clock();
        }
        self.aborted
    }

    #[cold]
    fn look_at_the_clock(&mut self) {
        // Tested at the same node counts in every run, so a node-bounded search stops at the
        // same place on any machine.
        if self.nodes >= self.max_nodes {
            self.aborted = true;
        }
        if let Some(deadline) = self.deadline {
            if Instant::now() >= deadline {
                self.aborted = true;
            }
        }
        if let Some(budget) = &self.budget {
            if budget.check(self.nodes) {
                self.aborted = true;
            }
        }
    }

    /// [`AlphaBeta::search`] one turn from the horizon, where most children are leaves and a
    /// cutoff usually comes with the first: probing and filling the table there costs more
    /// than the few transpositions it finds.
    fn frontier<const EXTRAS: bool>(
        &mut self,
        pos: &Position,
        mut alpha: i64,
        mut beta: i64,
    ) -> i64 {
        if self.enter() {
            return 0;
        }
        let maximizing = pos.side_to_move() == self.me;
        let [extra, capture, quiet] = move_classes::<EXTRAS>(pos, self.rules);
        let mut best = if maximizing { i64::MIN } else { i64::MAX };
        // Classes in the order of `ordered_moves`, each from the store outwards; no sorting,
        // as the first move usually decides.
        for class in [capture, extra, quiet] {
            let mut moves = class;
            while moves != 0 {
                let bit = 15 - moves.leading_zeros() as usize;
                moves &= !(1 << bit);
                let mv = bit + 1;
                let mut child = *pos;
                let outcome = child.play_unchecked(mv, self.rules);
                let value = if outcome.extra_turn && !outcome.game_over {
                    self.frontier::<EXTRAS>(&child, alpha, beta)
                } else {
                    self.horizon::<EXTRAS>(&child, outcome.game_over)
                };
                if maximizing {
                    best = best.max(value);
                    alpha = alpha.max(value);
                } else {
                    best = best.min(value);
                    beta = beta.min(value);
                }
                if alpha >= beta {
                    return best;
                }
            }
        }
        best
    }

    /// [`AlphaBeta::search`] at least two turns from the horizon. Kept in one piece: it is the
    /// search's hot loop (table probe, ordering, principal-variation re-search, table store
    /// share the bounds and the move buffer on the stack); `bench` measures it.
    fn node<const EXTRAS: bool>(
        &mut self,
        pos: &Position,
        depth: u32,
        mut alpha: i64,
        mut beta: i64,
    ) -> i64 {
        if self.enter() {
            return 0;
        }
        let mut hint = 0;
        let key = pos.key16();
        if let Some(e) = self.probe(key) {
            // Only a result for exactly this many remaining turns is the minimax value we
            // need; deeper or shallower ones merely suggest a move.
            if e.depth as u32 == depth {
                let cut = match e.bound {
                    BOUND_EXACT => true,
                    BOUND_LOWER => e.value >= beta,
                    BOUND_UPPER => e.value <= alpha,
                    _ => false,
                };
                if cut {
                    return e.value;
                }
            }
            hint = e.mv;
        }
        let (alpha0, beta0) = (alpha, beta);
        let maximizing = pos.side_to_move() == self.me;
        let mut buf = [0u32; 16];
        let n = ordered_moves::<EXTRAS>(
            pos,
            self.rules,
            hint,
            &self.history[maximizing as usize],
            &mut buf,
        );
        let mut best = if maximizing { i64::MIN } else { i64::MAX };
        let mut best_mv = 0u8;
        for (i, &key) in buf[..n].iter().enumerate() {
            let mv = (key & 0x1f) as usize;
            let mut child = *pos;
            let outcome = child.play_unchecked(mv, self.rules);
            let child_depth = if outcome.extra_turn { depth } else { depth - 1 };
            // Principal variation search: after the first move, prove with a null window
            // that a move is no better, and search it fully only when that fails.
            let value = if i == 0 || outcome.game_over || child_depth == 0 {
                self.child_value::<EXTRAS>(&child, outcome.game_over, child_depth, alpha, beta)
            } else if maximizing {
                let v = self.search::<EXTRAS>(&child, child_depth, alpha, alpha + 1);
                if v > alpha && v < beta {
                    self.search::<EXTRAS>(&child, child_depth, v, beta)
                } else {
                    v
                }
            } else {
                let v = self.search::<EXTRAS>(&child, child_depth, beta - 1, beta);
                if v < beta && v > alpha {
                    self.search::<EXTRAS>(&child, child_depth, alpha, v)
                } else {
                    v
                }
            };
            if maximizing {
                if value > best {
                    best = value;
                    best_mv = mv as u8;
                }
                alpha = alpha.max(value);
            } else {
                if value < best {
                    best = value;
                    best_mv = mv as u8;
                }
                beta = beta.min(value);
            }
            if alpha >= beta {
                // Killer moves were tried too and cost nodes: in Kalah a move's effect
                // depends too much on the exact seed counts. Captures are ordered by size
                // and the table's move comes first anyway.
                if key >> 24 < CLASS_CAPTURE {
                    let slot = &mut self.history[maximizing as usize][mv - 1];
                    *slot = slot.saturating_add(depth * depth);
                }
                break;
            }
        }
        if self.aborted {
            return 0;
        }
        let bound = if best <= alpha0 {
            BOUND_UPPER
        } else if best >= beta0 {
            BOUND_LOWER
        } else {
            BOUND_EXACT
        };
        self.store(key, depth, best, bound, best_mv);
        best
    }
}

impl<E: Evaluator> Drop for AlphaBeta<'_, E> {
    fn drop(&mut self) {
        if let Some(table) = self.table.take() {
            give_back(table);
        }
    }
}

/// `eval`'s score of `pos` for `me` minus its score for the opponent, halved: the evaluation
/// made antisymmetric, so that what one player gains the other loses.
///
/// Searches whose root is the pie rule's first move or swap decision score their leaves so.
/// Minimax assumes that the opponent minimises the root mover's score; with features that
/// are not zero-sum (own seeds, own mobility) both players can score one position well for
/// themselves, and then the first mover values a move that invites the swap as if the swap
/// left it that position's good side, and the player offered the swap values both options
/// alike. Scored antisymmetrically, swapping is worth to the swapper exactly what it costs
/// the first mover. Halving keeps an evaluator that is already antisymmetric (store
/// difference, `minimax`) exactly as it was.
#[inline]
pub fn zero_sum<E: Evaluator + ?Sized>(eval: &E, pos: &Position, me: Side) -> i64 {
    (eval.evaluate(pos, me) - eval.evaluate(pos, me.opponent())) / 2
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
    /// [`zero_sum`] as an evaluator.
    struct ZeroSum<'a, E>(&'a E);
    impl<E: Evaluator> Evaluator for ZeroSum<'_, E> {
        fn evaluate(&self, pos: &Position, me: Side) -> i64 {
            zero_sum(self.0, pos, me)
        }
    }
    fn root<E: Evaluator>(pos: &Position, depth: u32, eval: &E, rules: Rules) -> Vec<(usize, i64)> {
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
    if pos.pie() != Pie::Off {
        root(pos, depth, &ZeroSum(eval), rules)
    } else {
        root(pos, depth, eval, rules)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::StoreDiff;
    use crate::search::Stopped;

    /// Depth 16 from the start of Kalah(12,8) would take minutes; a cancel from another thread
    /// ends it at once, with a legal move for the owner to discard.
    #[test]
    fn a_cancel_stops_a_deep_search_at_once() {
        let pos = Position::start(12, 8).expect("a board");
        let budget = Budget::unlimited();
        let stop = budget.clone();
        let canceller = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(200));
            stop.cancel();
            Instant::now()
        });
        let eval = StoreDiff;
        let mut search = AlphaBeta::new(&eval, Rules::Standard);
        search.set_budget(&budget);
        let result = search.search_depth(&pos, 16);
        let returned = Instant::now();
        let cancelled = canceller.join().expect("the canceller");
        assert!(
            returned.saturating_duration_since(cancelled) < Duration::from_secs(1),
            "returned {:?} after the cancel",
            returned.saturating_duration_since(cancelled)
        );
        assert_eq!(budget.stopped(), Some(Stopped::Cancelled));
        assert!(pos.legal_moves().contains(result.best_moves[0]));
    }

    /// A budget nobody stops changes nothing of a search's result.
    #[test]
    fn an_unstopped_budget_changes_no_result() {
        let pos = Position::start(6, 4).expect("a board");
        let eval = StoreDiff;
        for depth in [3, 6, 9] {
            let plain = AlphaBeta::new(&eval, Rules::Standard).search_depth(&pos, depth);
            let mut search = AlphaBeta::new(&eval, Rules::Standard);
            search.set_budget(&Budget::unlimited());
            assert_eq!(search.search_depth(&pos, depth), plain);
        }
    }
}
