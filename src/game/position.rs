//! The board of Kalah(m, n) and the rules that change it.
//!
//! [`Position`] is validated at the edges ([`Position::new`], [`Position::start`], the KPN
//! parser) and then trusted: [`Position::play_unchecked`] is the fast path the searches use,
//! while [`Position::play`] checks the move first.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::GameError;

/// Largest number of pits per side.
pub const MAX_PITS: usize = 12;
/// Largest number of seeds on the board (pits and stores together).
pub const MAX_SEEDS: u32 = 1536;
/// Pits and stores of the largest board: `2 * MAX_PITS + 2`.
pub const MAX_CELLS: usize = 2 * MAX_PITS + 2;

/// One of the two players. South moves first from the start position.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Side {
    South,
    North,
}

impl Side {
    #[inline]
    pub fn opponent(self) -> Side {
        match self {
            Side::South => Side::North,
            Side::North => Side::South,
        }
    }

    #[inline]
    pub(crate) fn index(self) -> usize {
        self as usize
    }

    pub(crate) fn letter(self) -> char {
        match self {
            Side::South => 'S',
            Side::North => 'N',
        }
    }
}

impl fmt::Display for Side {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Side::South => "south",
            Side::North => "north",
        })
    }
}

/// Which capture rule is in force (docs/reference/rules.md).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum Rules {
    /// A capture needs seeds in the opposite pit.
    #[default]
    Standard,
    /// The last seed is captured even when the opposite pit is empty (Irving et al.'s rules).
    EmptyCapture,
}

impl Rules {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Rules::Standard => "standard",
            Rules::EmptyCapture => "empty-capture",
        }
    }
}

impl fmt::Display for Rules {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Where a game stands with respect to the pie rule (docs/reference/rules.md).
///
/// Only the first two plies of a game played with the pie rule are special, so every other
/// position is [`Pie::Off`] and the hot path tests one byte to know it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum Pie {
    /// No pie rule, or its two special plies are behind us.
    #[default]
    Off = 0,
    /// South's first move of a pie game: one sowing that never earns an extra turn.
    Opening = 1,
    /// North to move right after South's first move: North may play [`SWAP`].
    Offer = 2,
}

/// The swap of the pie rule as a move value. Pit moves are 1..=m with m at most
/// [`MAX_PITS`] = 12, so 16 never names a pit; it is bit 15 of a [`MoveSet`] and fits the
/// 16-entry per-move tables of the searches.
///
/// Sides in a [`Position`] name players, not seats: South is always the player who moved
/// first. A swap hands the first mover North's seat, so the position after it shows the two
/// halves of the board exchanged, with South (the first mover, now sitting North) to move.
/// Searches therefore see an ordinary move that passes the turn; seat-based front ends such
/// as the ManKalah protocol exchange the halves back.
pub const SWAP: usize = 16;

/// What happened during one sowing; the searches and the UI both want to know.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MoveOutcome {
    /// The last seed fell into the mover's store: the mover moves again.
    pub extra_turn: bool,
    /// Seeds moved to the mover's store by a capture (the capturing seed included).
    pub captured: u16,
    /// One side ran out of seeds and the remaining seeds were swept to their owners' stores.
    pub game_over: bool,
}

/// A Kalah position: pits and stores in sowing order plus the side to move.
///
/// Cells `0..m` are South's pits, `m` South's store, `m+1..=2m` North's pits and `2m+1`
/// North's store. South pit `i` faces cell `2m - i`.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Position {
    cells: [u16; MAX_CELLS],
    pits: u8,
    side: Side,
    pie: Pie,
}

/// For a 6-pit board, indexed by the cell a move lifts and its seeds (at most a lap, 13): how
/// many seeds each of the first 16 cells receives, the lifted pit's own seeds taken off
/// (wrapping). Cells 14 and 15 are never used.
///
/// The lift is in the table because a store of the one pit just before the 16-cell load of
/// the sowing cannot be forwarded to that load: on AMD's Zen processors the load waited for
/// the store to reach the cache at every move, which made perft 1.8 times slower.
static SOW6: [[[u16; 16]; 14]; 14] = sow6_table();

const fn sow6_table() -> [[[u16; 16]; 14]; 14] {
    let mut table = [[[0u16; 16]; 14]; 14];
    let mut start = 0;
    while start < 14 {
        // The stores (6 and 13) are never lifted.
        if start != 6 && start != 13 {
            let skip = if start < 6 { 13 } else { 6 };
            let mut seeds = 1;
            while seeds < 14 {
                let (mut cell, mut left) = (start, seeds);
                while left > 0 {
                    cell = (cell + 1) % 14;
                    if cell != skip {
                        table[start][seeds][cell] += 1;
                        left -= 1;
                    }
                }
                // The lift: the pit loses its seeds (and gets one back on a whole lap).
                table[start][seeds][start] = table[start][seeds][start].wrapping_sub(seeds as u16);
                seeds += 1;
            }
        }
        start += 1;
    }
    table
}

/// Bit `i` set where `cells[i]` is not zero. On x86-64 two compares of eight lanes, a pack
/// and a byte mask (SSE2, which every x86-64 processor has); LLVM does not find this for the
/// plain loop, which costs three instructions a lane.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn nonzero_lanes(cells: &[u16; MAX_PITS]) -> u16 {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi16, _mm_loadl_epi64, _mm_loadu_si128, _mm_movemask_epi8,
        _mm_packs_epi16, _mm_setzero_si128,
    };
    const _: () = assert!(MAX_PITS == 12, "two loads cover 8 + 4 lanes");
    let ptr = cells.as_ptr() as *const __m128i;
    // SAFETY: SSE2 is part of x86-64. The first load reads lanes 0..8 (16 bytes) and the
    // second lanes 8..12 (8 bytes): both within the 24 bytes of `cells`; neither needs
    // alignment.
    let empty = unsafe {
        let zero = _mm_setzero_si128();
        let low = _mm_cmpeq_epi16(_mm_loadu_si128(ptr), zero);
        let high = _mm_cmpeq_epi16(_mm_loadl_epi64(cells[8..].as_ptr() as *const __m128i), zero);
        _mm_movemask_epi8(_mm_packs_epi16(low, high)) as u16
    };
    // Lanes 12..16 of the pack (the zeroed upper half of the second load) read as empty:
    // inverted, bits 12..16 are clear.
    !empty
}

/// The low byte of each cell, cell 0 in the lowest byte: one pack on x86-64.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn low_bytes(cells: &[u16; 16]) -> u128 {
    use std::arch::x86_64::{
        __m128i, _mm_and_si128, _mm_loadu_si128, _mm_packus_epi16, _mm_set1_epi16, _mm_storeu_si128,
    };
    let ptr = cells.as_ptr() as *const __m128i;
    let mut out = 0u128;
    // SAFETY: SSE2 is part of x86-64; the loads read lanes 0..8 and 8..16 of `cells` (32
    // bytes) and the store writes the 16 bytes of `out`, none of them aligned.
    unsafe {
        // Masking to the low byte first keeps the pack's saturation from changing a value.
        let byte = _mm_set1_epi16(0xff);
        let low = _mm_and_si128(_mm_loadu_si128(ptr), byte);
        let high = _mm_and_si128(_mm_loadu_si128(ptr.add(1)), byte);
        _mm_storeu_si128(
            &mut out as *mut u128 as *mut __m128i,
            _mm_packus_epi16(low, high),
        );
    }
    out
}

#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn low_bytes(cells: &[u16; 16]) -> u128 {
    let mut bytes = [0u8; 16];
    for (b, &c) in bytes.iter_mut().zip(cells) {
        *b = c as u8;
    }
    u128::from_le_bytes(bytes)
}

#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn nonzero_lanes(cells: &[u16; MAX_PITS]) -> u16 {
    let mut bits = 0u16;
    for (i, &seeds) in cells.iter().enumerate() {
        bits |= ((seeds != 0) as u16) << i;
    }
    bits
}

impl Position {
    /// The start position of Kalah(m, n) with South to move.
    pub fn start(pits: usize, seeds: u32) -> Result<Position, GameError> {
        if pits == 0 || pits > MAX_PITS {
            return Err(GameError::BadBoard(format!(
                "{pits} pits per side: supported are 1 to {MAX_PITS}"
            )));
        }
        if seeds == 0 {
            return Err(GameError::BadBoard(
                "0 seeds per pit: the start needs at least 1".into(),
            ));
        }
        let total = seeds as u64 * 2 * pits as u64;
        if total > MAX_SEEDS as u64 {
            return Err(GameError::BadBoard(format!(
                "{pits} pits of {seeds} seeds make {total} seeds: at most {MAX_SEEDS} are supported"
            )));
        }
        let mut cells = [0u16; MAX_CELLS];
        for i in 0..pits {
            cells[i] = seeds as u16;
            cells[pits + 1 + i] = seeds as u16;
        }
        Ok(Position {
            cells,
            pits: pits as u8,
            side: Side::South,
            pie: Pie::Off,
        })
    }

    /// Builds a position from South's pits, South's store, North's pits, North's store and the
    /// side to move, checking sizes and totals.
    pub fn new(
        south: &[u32],
        south_store: u32,
        north: &[u32],
        north_store: u32,
        side: Side,
    ) -> Result<Position, GameError> {
        let m = south.len();
        if m == 0 || m > MAX_PITS {
            return Err(GameError::BadBoard(format!(
                "{m} pits per side: supported are 1 to {MAX_PITS}"
            )));
        }
        if north.len() != m {
            return Err(GameError::BadBoard(format!(
                "South has {m} pits but North has {}: both sides need the same number",
                north.len()
            )));
        }
        let total: u64 = south.iter().chain(north).map(|&s| s as u64).sum::<u64>()
            + south_store as u64
            + north_store as u64;
        if total > MAX_SEEDS as u64 {
            return Err(GameError::BadBoard(format!(
                "{total} seeds on the board: at most {MAX_SEEDS} are supported"
            )));
        }
        let mut cells = [0u16; MAX_CELLS];
        for i in 0..m {
            cells[i] = south[i] as u16;
            cells[m + 1 + i] = north[i] as u16;
        }
        cells[m] = south_store as u16;
        cells[2 * m + 1] = north_store as u16;
        Ok(Position {
            cells,
            pits: m as u8,
            side,
            pie: Pie::Off,
        })
    }

    /// The position under the pie rule when `on`: a start position (South to move, stores
    /// empty, every pit alike) enters [`Pie::Opening`]; any other position is past the
    /// opening and stays as it is. With `on` false nothing changes either: a position that
    /// already offers the swap (KPN field `P`) carries the rule with it.
    pub fn with_pie(mut self, on: bool) -> Position {
        if on && self.pie == Pie::Off && self.is_start() {
            self.pie = Pie::Opening;
        }
        self
    }

    /// Whether this is the start of some Kalah(m, n): South to move, stores empty and every
    /// pit holding the same non-zero number of seeds.
    pub(crate) fn is_start(&self) -> bool {
        let m = self.pits as usize;
        let first = self.cells[0];
        self.side == Side::South
            && first > 0
            && self.cells[m] == 0
            && self.cells[2 * m + 1] == 0
            && self.side_pits(Side::South).iter().all(|&c| c == first)
            && self.side_pits(Side::North).iter().all(|&c| c == first)
    }

    #[inline]
    pub fn pie(&self) -> Pie {
        self.pie
    }

    /// Whether the side to move may play [`SWAP`].
    #[inline]
    pub fn swap_available(&self) -> bool {
        self.pie == Pie::Offer
    }

    /// This board with North to move and the swap on offer, if it is what South's first move
    /// of a pie game leaves (the only place the swap exists); `None` otherwise.
    pub(crate) fn with_swap_offer(self) -> Option<Position> {
        if self.side != Side::North || self.pie != Pie::Off {
            return None;
        }
        let m = self.pits as usize;
        let total = self.total_seeds() as usize;
        if total % (2 * m) != 0 {
            return None;
        }
        let start = Position::start(m, (total / (2 * m)) as u32)
            .ok()?
            .with_pie(true);
        start.legal_moves().into_iter().find_map(|mv| {
            let mut child = start;
            child.play_unchecked(mv, Rules::Standard);
            // The capture rules cannot differ on a first move: the only empty pit is the one
            // lifted, and the pit facing it still holds its seeds.
            (child.pie == Pie::Offer && child.cells == self.cells).then_some(child)
        })
    }

    /// Pits per side (m).
    #[inline]
    pub fn pits(&self) -> usize {
        self.pits as usize
    }

    #[inline]
    pub fn side_to_move(&self) -> Side {
        self.side
    }

    /// The same position with the other side to move (used by evaluations that look at the
    /// opponent's threats).
    #[inline]
    pub fn with_side_to_move(mut self, side: Side) -> Position {
        // A hypothetical view is never the pie rule's special ply: its moves are pit moves.
        self.pie = Pie::Off;
        self.side = side;
        self
    }

    /// All cells in sowing order (`2m + 2` of them).
    #[inline]
    pub fn cells(&self) -> &[u16] {
        &self.cells[..2 * self.pits as usize + 2]
    }

    #[inline]
    pub(crate) fn store_index(&self, side: Side) -> usize {
        let m = self.pits as usize;
        match side {
            Side::South => m,
            Side::North => 2 * m + 1,
        }
    }

    /// Index of the first pit of `side` (move 1).
    #[inline]
    pub fn first_pit(&self, side: Side) -> usize {
        match side {
            Side::South => 0,
            Side::North => self.pits as usize + 1,
        }
    }

    #[inline]
    pub fn store(&self, side: Side) -> u32 {
        self.cells[self.store_index(side)] as u32
    }

    /// The pits of `side`, move 1 first.
    #[inline]
    pub(crate) fn side_pits(&self, side: Side) -> &[u16] {
        let first = self.first_pit(side);
        &self.cells[first..first + self.pits as usize]
    }

    /// Seeds in the pit of `side` that move `mv` (1-based) would sow.
    #[inline]
    pub(crate) fn pit(&self, side: Side, mv: usize) -> u32 {
        self.cells[self.first_pit(side) + mv - 1] as u32
    }

    /// Bit `k - 1` set for each non-empty pit `k` of the side whose first pit is cell
    /// `first`. Reads a fixed window of [`MAX_PITS`] cells (it always lies within the board
    /// array: North's first pit is at most cell 13) and masks it down to the board's pits, so
    /// that the compiler turns it into a few vector instructions with no loop and no branch;
    /// move generation calls it at every node.
    #[inline(always)]
    fn nonempty_mask(&self, first: usize) -> u16 {
        let window: &[u16; MAX_PITS] = self.cells[first..first + MAX_PITS]
            .try_into()
            .expect("a window of MAX_PITS cells");
        nonzero_lanes(window) & ((1u16 << self.pits) - 1)
    }

    /// The non-empty pits of `side` as moves (bit `k - 1` for pit `k`), whoever is to move.
    #[inline(always)]
    pub fn nonempty_pits_of(&self, side: Side) -> MoveSet {
        MoveSet(self.nonempty_mask(self.first_pit(side)))
    }

    /// Seeds in the pits of `side`.
    #[inline]
    pub fn seeds_on_side(&self, side: Side) -> u32 {
        self.side_pits(side).iter().map(|&s| s as u32).sum()
    }

    /// Seeds in all pits (not in stores).
    #[inline]
    pub fn seeds_in_pits(&self) -> u32 {
        self.seeds_on_side(Side::South) + self.seeds_on_side(Side::North)
    }

    /// All seeds of the game, stores included.
    pub fn total_seeds(&self) -> u32 {
        self.cells().iter().map(|&s| s as u32).sum()
    }

    /// The cell facing pit `cell` on the other side.
    #[inline]
    pub fn opposite(&self, cell: usize) -> usize {
        2 * self.pits as usize - cell
    }

    /// The game is over when either side has no seeds left in its pits.
    #[inline]
    pub fn is_game_over(&self) -> bool {
        self.nonempty_mask(0) == 0 || self.nonempty_mask(self.pits as usize + 1) == 0
    }

    /// Bit `k - 1` is set when move `k` is legal. Empty once the game is over.
    #[inline]
    pub fn legal_moves(&self) -> MoveSet {
        let own = self.nonempty_mask(self.first_pit(self.side));
        let other = self.nonempty_mask(self.first_pit(self.side.opponent()));
        if other == 0 {
            return MoveSet(0);
        }
        MoveSet(own | self.swap_bit(own))
    }

    /// [`SWAP`]'s bit when the swap is on offer and the mover has a pit move (the swap is
    /// never the only move: South's first sowing always leaves North seeds).
    #[inline(always)]
    fn swap_bit(&self, own: u16) -> u16 {
        ((self.pie == Pie::Offer && own != 0) as u16) << (SWAP - 1)
    }

    #[inline]
    pub fn is_legal(&self, mv: usize) -> bool {
        mv >= 1 && mv <= self.pits as usize && self.legal_moves().contains(mv)
    }

    /// Plays move `mv` (1..=m) after checking that it is legal.
    pub fn play(&mut self, mv: usize, rules: Rules) -> Result<MoveOutcome, GameError> {
        if self.is_game_over() {
            return Err(GameError::IllegalMove {
                mv,
                reason: "the game is over".into(),
            });
        }
        if mv == SWAP {
            if !self.swap_available() {
                return Err(GameError::IllegalMove {
                    mv,
                    reason: "the swap is only legal for North right after South's first move of a game with the pie rule".into(),
                });
            }
            return Ok(self.play_unchecked(mv, rules));
        }
        if mv == 0 || mv > self.pits as usize {
            return Err(GameError::IllegalMove {
                mv,
                reason: format!("moves are numbered 1 to {}", self.pits),
            });
        }
        if self.pit(self.side, mv) == 0 {
            return Err(GameError::IllegalMove {
                mv,
                reason: "that pit is empty".into(),
            });
        }
        Ok(self.play_unchecked(mv, rules))
    }

    /// Plays move `mv`, which must be legal (a non-empty pit of the side to move in a game that
    /// is not over, or [`SWAP`] when offered). The searches call this millions of times a
    /// second.
    #[inline]
    pub fn play_unchecked(&mut self, mv: usize, rules: Rules) -> MoveOutcome {
        if self.pie != Pie::Off {
            return self.play_pie(mv, rules);
        }
        self.sow(mv, rules)
    }

    /// A move during the pie rule's two special plies; kept out of line so the common path
    /// pays one byte test.
    #[cold]
    #[inline(never)]
    fn play_pie(&mut self, mv: usize, rules: Rules) -> MoveOutcome {
        let state = self.pie;
        self.pie = Pie::Off;
        if mv == SWAP {
            debug_assert_eq!(state, Pie::Offer, "SWAP played where it is not offered");
            let m = self.pits as usize;
            let (south, north) = self.cells[..2 * m + 2].split_at_mut(m + 1);
            south.swap_with_slice(north);
            self.side = Side::South;
            return MoveOutcome::default();
        }
        let mut outcome = self.sow(mv, rules);
        if state == Pie::Opening {
            if outcome.extra_turn {
                outcome.extra_turn = false;
                self.side = Side::North;
            }
            if !outcome.game_over {
                self.pie = Pie::Offer;
            }
        }
        outcome
    }

    #[inline(always)]
    fn sow(&mut self, mv: usize, rules: Rules) -> MoveOutcome {
        let m = self.pits as usize;
        let side = self.side;
        let first = self.first_pit(side);
        let opp_first = self.first_pit(side.opponent());
        let start = first + mv - 1;
        let own_store = first + m;
        let skip = self.store_index(side.opponent());
        let cycle = 2 * m + 1;
        let n_cells = 2 * m + 2;

        let mut seeds = self.cells[start] as usize;
        debug_assert!(seeds > 0, "play_unchecked on an empty pit");

        // Whole laps: every cell but the opponent's store gets the same number of seeds,
        // which keeps huge pits as cheap as small ones.
        if seeds > cycle {
            let laps = ((seeds - 1) / cycle) as u16;
            for (i, cell) in self.cells[..n_cells].iter_mut().enumerate() {
                if i != skip {
                    *cell += laps;
                }
            }
            seeds -= laps as usize * cycle;
            // The pit keeps what is left to sow, which the sowing below takes off.
            self.cells[start] -= laps * cycle as u16;
        }

        let o = mv - 1;
        let end = o + seeds;
        if m == 6 {
            // The common board: every sowing of at most a lap is one row of a table, added to
            // the first 16 cells in two vector instructions.
            for (cell, add) in self.cells[..16].iter_mut().zip(&SOW6[start][seeds]) {
                *cell = cell.wrapping_add(*add);
            }
        } else {
            self.cells[start] -= seeds as u16;
            self.sow_runs(first, opp_first, start, end);
        }
        let last_offset = if end >= cycle { end - cycle } else { end };
        self.finish_move(m, side, first, opp_first, own_store, last_offset, rules)
    }

    /// Sows the seeds of a move of at most one lap, which lift pit `start` (offset `end - seeds`
    /// along the mover's cycle) and reach offset `end`.
    #[inline]
    fn sow_runs(&mut self, first: usize, opp_first: usize, start: usize, end: usize) {
        let m = self.pits as usize;
        let cycle = 2 * m + 1;
        // At most one lap is left. Along the mover's cycle (offset 0 its move 1, m its store,
        // m + 1..=2m the opponent's pits) the seeds go to offsets o + 1..=o + seeds, which
        // fall into at most three runs of adjacent cells: the mover's pits and store, the
        // opponent's pits, and the mover's pits again. Sowing runs instead of single seeds
        // avoids a wrap and a skip test per seed.
        for c in &mut self.cells[start + 1..=first + end.min(m)] {
            *c += 1;
        }
        if end > m {
            for c in &mut self.cells[opp_first..opp_first + (end.min(2 * m) - m)] {
                *c += 1;
            }
            if end >= cycle {
                for c in &mut self.cells[first..=first + (end - cycle)] {
                    *c += 1;
                }
            }
        }
    }

    /// Captures, the extra turn, the change of turn and the end of the game, once a move by
    /// `side` has been sown and its last seed fell at `last_offset` along the mover's cycle.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn finish_move(
        &mut self,
        m: usize,
        side: Side,
        first: usize,
        opp_first: usize,
        own_store: usize,
        last_offset: usize,
        rules: Rules,
    ) -> MoveOutcome {
        // Written with few branches: where the last seed lands is as good as random, so a
        // branch on it is mispredicted often, while a capture and the end of the game are
        // rare and predicted well.
        let extra_turn = last_offset == m;
        let in_own_pit = last_offset < m;
        // Outside the mover's pits any pit of theirs serves: the capture is off anyway.
        let last = first + if in_own_pit { last_offset } else { 0 };
        let opposite = 2 * m - last;
        let opp_seeds = self.cells[opposite];
        let capture = in_own_pit
            & (self.cells[last] == 1)
            & ((opp_seeds > 0) | (rules == Rules::EmptyCapture));
        let mut outcome = MoveOutcome {
            extra_turn,
            ..MoveOutcome::default()
        };
        if capture {
            self.cells[own_store] += opp_seeds + 1;
            self.cells[opposite] = 0;
            self.cells[last] = 0;
            outcome.captured = opp_seeds + 1;
        }
        self.side = if extra_turn { side } else { side.opponent() };

        // Sowing only adds to the opponent's pits, so only a capture can empty them.
        let own_empty = self.nonempty_mask(first) == 0;
        let opp_empty = capture && self.nonempty_mask(opp_first) == 0;
        if own_empty || opp_empty {
            let south: u16 = self.cells[..m].iter().sum();
            let north: u16 = self.cells[m + 1..2 * m + 1].iter().sum();
            self.cells[m] += south;
            self.cells[2 * m + 1] += north;
            for c in &mut self.cells[..m] {
                *c = 0;
            }
            for c in &mut self.cells[m + 1..2 * m + 1] {
                *c = 0;
            }
            outcome.game_over = true;
        }
        outcome
    }

    /// Stores after the game ends from here with nobody moving: each side keeps its own pits.
    /// For a finished game these are the final stores.
    pub fn final_stores(&self) -> (u32, u32) {
        (
            self.store(Side::South) + self.seeds_on_side(Side::South),
            self.store(Side::North) + self.seeds_on_side(Side::North),
        )
    }

    /// Store difference from `side`'s point of view.
    #[inline]
    pub(crate) fn store_diff(&self, side: Side) -> i32 {
        self.store(side) as i32 - self.store(side.opponent()) as i32
    }

    /// Where the last seed of move `mv` by `side` would land, without playing it.
    #[inline]
    pub fn landing_cell(&self, side: Side, mv: usize) -> usize {
        let m = self.pits as usize;
        let first = self.first_pit(side);
        let offset = self.landing_offset(side, mv);
        // Offsets 0..=m (own pits and store) follow `first` directly; the opponent's pits
        // (offsets m+1..=2m) wrap past the end of the cells for North.
        let cell = first + offset;
        if cell >= 2 * m + 2 {
            cell - (2 * m + 2)
        } else {
            cell
        }
    }

    /// Where the last seed of move `mv` by `side` would land, counted along the mover's
    /// sowing cycle: `0..m` its own pits (move `k` is offset `k - 1`), `m` its store and
    /// `m + 1..=2m` the opponent's pits.
    #[inline]
    pub(crate) fn landing_offset(&self, side: Side, mv: usize) -> usize {
        let m = self.pits as usize;
        let cycle = 2 * m + 1;
        let offset = mv - 1 + self.cells[self.first_pit(side) + mv - 1] as usize;
        // Move ordering calls this for every move of every node: pits rarely hold a lap of
        // seeds, so subtraction almost always replaces the division.
        if offset < cycle {
            offset
        } else if offset < 2 * cycle {
            offset - cycle
        } else {
            offset % cycle
        }
    }

    /// Whether [`Position::key16`] tells positions of this board apart: at most 6 pits per
    /// side (14 cells and the side fit in 16 bytes) and no cell beyond a byte.
    #[inline]
    pub(crate) fn fits_key16(&self) -> bool {
        self.pits <= 6 && self.total_seeds() <= u8::MAX as u32
    }

    /// The cells as bytes with the side to move in the last byte: a compact exact key for
    /// transposition tables among positions with the same number of pits, as long as
    /// [`Position::fits_key16`] holds for them.
    #[inline]
    pub(crate) fn key16(&self) -> u128 {
        // Cells 14 and 15 are unused on boards of up to 6 pits: cell 15 carries the side and
        // the pie state.
        let tag = (self.side as u128 | (self.pie as u128) << 1) << 120;
        low_bytes(self.cells[..16].try_into().expect("16 cells")) & !(0xff << 120) | tag
    }

    /// The moves of the side to move without checking whether the game is over, for searches
    /// that already know it is not: its non-empty pits, and [`SWAP`] when offered.
    #[inline]
    pub(crate) fn nonempty_pits(&self) -> MoveSet {
        let own = self.nonempty_mask(self.first_pit(self.side));
        MoveSet(own | self.swap_bit(own))
    }
}

/// The legal moves of a position as a bit set: bit `k - 1` stands for move `k`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct MoveSet(pub u16);

impl MoveSet {
    /// The pit moves only, without [`SWAP`].
    #[inline]
    pub fn pits_only(self) -> MoveSet {
        MoveSet(self.0 & !(1 << (SWAP - 1)))
    }
    #[inline]
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
    #[inline]
    pub fn len(self) -> usize {
        self.0.count_ones() as usize
    }
    #[inline]
    pub fn contains(self, mv: usize) -> bool {
        (1..=16).contains(&mv) && self.0 & (1 << (mv - 1)) != 0
    }
    /// The moves in increasing order.
    pub fn to_vec(self) -> Vec<usize> {
        self.into_iter().collect()
    }
}

impl IntoIterator for MoveSet {
    type Item = usize;
    type IntoIter = MoveIter;
    fn into_iter(self) -> MoveIter {
        MoveIter(self.0)
    }
}

/// Iterates a [`MoveSet`] from move 1 upwards.
pub struct MoveIter(u16);

impl Iterator for MoveIter {
    type Item = usize;
    #[inline]
    fn next(&mut self) -> Option<usize> {
        if self.0 == 0 {
            return None;
        }
        let bit = self.0.trailing_zeros() as usize;
        self.0 &= self.0 - 1;
        Some(bit + 1)
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.0.count_ones() as usize;
        (n, Some(n))
    }
}

impl ExactSizeIterator for MoveIter {}
