//! The exact solver: the value of a position under perfect play by both sides.
//!
//! The value of a position depends only on its pits and the side to move, not on the stores,
//! so the solver searches the margin the side to move will *gain from here* and the caller
//! adds the current store difference. That keeps transpositions that differ only in stores
//! together (the pie rule's swap offer is the one exception, see `Walker::search`). With the
//! pie rule a swap is one more move; as [`crate::game::SWAP`] relabels the board, the value
//! of the position after it is negated like that of any move that passes the turn. The
//! search is MTD(f): null-window alpha-beta probes over a transposition table
//! that keeps a lower and an upper bound per position, converging on the exact value.

use std::sync::atomic::Ordering::Relaxed;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize};
use std::sync::Arc;

use rayon::prelude::*;

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
    /// Positions searched by the busiest thread, summed over the probes. Every thread
    /// searches until its probe ends, so on as many cores as threads a solve takes about as
    /// long as one thread alone takes for this many positions. Equals `nodes` on one thread.
    pub busiest: u64,
}

/// Where a solve stands after one MTD(f) probe: the value lies in `lower..=upper`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProbeReport {
    pub probe: u32,
    pub lower: i32,
    pub upper: i32,
    /// Positions searched so far in this solve.
    pub nodes: u64,
}

/// The non-key part of a table slot.
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

/// Slots in a bucket: a probe reads one bucket, a cache line with 16-byte slots.
const BUCKET: usize = 4;

/// The transposition table, shared by the threads of one solve. A slot is two words,
/// `[key ^ meta, meta]`, on boards of up to 6 pits (the key packs the pits exactly in 64
/// bits), three, `[key high ^ meta, key low ^ meta, meta]`, on larger boards. Threads read
/// and write slots without locks; a slot torn by two writers fails the key check (the key
/// words only match under the meta word they were written with), so a reader never takes one
/// position's bounds for another's. A meta word of 0 marks an empty slot (an entry always has
/// seeds in the pits, so its meta is never 0).
struct Table {
    /// Anonymous memory, zero until written, so a big table costs nothing until it is used.
    map: memmap2::MmapMut,
    slots: usize,
    /// Words a slot.
    stride: usize,
    /// Bits a pit in the two-word key, 0 with three-word slots.
    pit_bits: u32,
    pits: usize,
    /// Slots that hold an entry (threads add their counts in batches).
    used: AtomicUsize,
}

impl Table {
    fn new(log2: u32, pits: usize) -> Table {
        let slots = 1usize << log2;
        let narrow = pits <= 6;
        let stride = if narrow { 2 } else { 3 };
        let bytes = slots * stride * 8;
        let map = memmap2::MmapOptions::new()
            .len(bytes)
            .map_anon()
            .expect("memory for the transposition table");
        #[cfg(target_os = "linux")]
        if bytes >= 4 << 20 {
            // Probes land anywhere in the table, so with 4 KiB pages nearly every one also
            // misses the TLB: huge pages made Kalah(6,4) 1.46 times faster. Only advice:
            // without transparent huge pages the table works the same.
            let _ = map.advise(memmap2::Advice::HugePage);
        }
        Table {
            map,
            slots,
            stride,
            pit_bits: if narrow {
                62 / (2 * pits.max(1) as u32)
            } else {
                0
            },
            pits,
            used: AtomicUsize::new(0),
        }
    }

    fn len(&self) -> usize {
        self.slots
    }

    fn bytes(&self) -> usize {
        self.slots * self.stride * 8
    }

    #[inline]
    fn words(&self) -> &[AtomicU64] {
        // SAFETY: the map is `slots * stride` words long, page-aligned, zero-initialised and
        // lives as long as `self`; AtomicU64 has the size of u64 and no invalid bit patterns.
        unsafe {
            std::slice::from_raw_parts(
                self.map.as_ptr() as *const AtomicU64,
                self.slots * self.stride,
            )
        }
    }

    /// The first slot of `key`'s bucket. Every bit of the key must reach the index: the
    /// earlier hash took bits 20 and up of one product, which no higher key bit can move,
    /// so South's last two pits never chose a bucket, a few buckets took most positions and
    /// the table stopped growing at 12 MiB (Kalah(6,4) without a database: 865 M nodes).
    /// The high half is multiplied before it is folded in, so that equal pit runs on the two
    /// sides do not cancel, then splitmix64's finaliser spreads the bits.
    #[inline]
    fn bucket(&self, key: u128, side: u8) -> usize {
        let mut h = (key as u64)
            ^ ((key >> 64) as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15)
            ^ (side as u64).wrapping_mul(0xd6e8_feb8_6659_fd93);
        h ^= h >> 30;
        h = h.wrapping_mul(0xbf58_476d_1ce4_e5b9);
        h ^= h >> 27;
        h = h.wrapping_mul(0x94d0_49bb_1331_11eb);
        h ^= h >> 31;
        (h as usize) & (self.slots - 1) & !(BUCKET - 1)
    }

    /// Asks the processor to fetch a bucket that will be probed soon.
    #[inline]
    fn prefetch(&self, base: usize) {
        #[cfg(target_arch = "x86_64")]
        {
            let ptr = self.words()[base * self.stride..].as_ptr();
            // SAFETY: a prefetch is only a hint; the address lies inside the table.
            unsafe {
                std::arch::x86_64::_mm_prefetch(ptr as *const i8, std::arch::x86_64::_MM_HINT_T0)
            };
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = base;
    }

    /// The entry in slot `i` when it is whole: its key and meta.
    #[inline]
    fn read(&self, i: usize) -> Option<(u128, Meta)> {
        let w = &self.words()[i * self.stride..(i + 1) * self.stride];
        let meta = w[self.stride - 1].load(Relaxed);
        if meta == 0 {
            return None;
        }
        let key = if self.stride == 2 {
            (w[0].load(Relaxed) ^ meta) as u128
        } else {
            let high = w[0].load(Relaxed) ^ meta;
            let low = w[1].load(Relaxed) ^ meta;
            (high as u128) << 64 | low as u128
        };
        Some((key, Meta::unpack(meta)))
    }

    #[inline]
    fn write(&self, i: usize, key: u128, meta: Meta) {
        let word = meta.pack();
        let w = &self.words()[i * self.stride..(i + 1) * self.stride];
        if self.stride == 2 {
            w[0].store(key as u64 ^ word, Relaxed);
            w[1].store(word, Relaxed);
        } else {
            w[0].store((key >> 64) as u64 ^ word, Relaxed);
            w[1].store(key as u64 ^ word, Relaxed);
            w[2].store(word, Relaxed);
        }
    }

    #[inline]
    fn meta_word(&self, i: usize) -> u64 {
        self.words()[i * self.stride + self.stride - 1].load(Relaxed)
    }

    /// The slot and entry of `key` for `side`, if the table holds one.
    #[inline]
    fn probe(&self, key: u128, side: u8) -> Option<(usize, Meta)> {
        let base = self.bucket(key, side);
        (base..base + BUCKET).find_map(|i| match self.read(i) {
            Some((k, meta)) if k == key && meta.side == side => Some((i, meta)),
            _ => None,
        })
    }

    /// Puts an entry in its bucket, over the slot that saves the least work; true when it
    /// took an empty slot.
    fn insert(&self, key: u128, meta: Meta) -> bool {
        let base = self.bucket(key, meta.side);
        let mut victim = base;
        let mut victim_work = u16::MAX;
        for i in base..base + BUCKET {
            let word = self.meta_word(i);
            if word == 0 {
                self.write(i, key, meta);
                return true;
            }
            let work = Meta::unpack(word).work;
            if work < victim_work {
                victim = i;
                victim_work = work;
            }
        }
        self.write(victim, key, meta);
        false
    }

    /// A table of `2^log2` slots holding every whole entry of this one.
    fn resized(&self, log2: u32) -> Table {
        let table = Table::new(log2, self.pits);
        let mut used = 0;
        for i in 0..self.len() {
            if let Some((key, meta)) = self.read(i) {
                used += table.insert(key, meta) as usize;
            }
        }
        table.used.store(used, Relaxed);
        table
    }

    /// The table key of a position, `None` when this table cannot hold it. Two-word slots
    /// pack every pit in `pit_bits` bits (a position with a fuller pit is not kept); three-word
    /// slots take the pits exactly when every pit holds under 256 seeds and there are at most
    /// 16 pits, otherwise a 128-bit mix of all pits (a false match then needs a 128-bit
    /// collision).
    #[inline]
    fn key(&self, pos: &Position) -> Option<u128> {
        let m = pos.pits();
        let cells = pos.cells();
        let (first, second) = if pos.side_to_move() == crate::game::Side::North {
            (m + 1, 0)
        } else {
            (0, m + 1)
        };
        if self.pit_bits != 0 {
            let b = self.pit_bits;
            let mut key: u64 = 0;
            let mut all: u64 = 0;
            for &c in cells[first..first + m]
                .iter()
                .chain(&cells[second..second + m])
            {
                key = (key << b) | c as u64;
                all |= c as u64;
            }
            return (all >> b == 0).then_some(key as u128);
        }
        let fits = m <= 8 && cells.iter().all(|&c| c < 256);
        let mut key: u128 = 0;
        if fits {
            for &c in cells[first..first + m]
                .iter()
                .chain(&cells[second..second + m])
            {
                key = (key << 8) | c as u128;
            }
            Some(key)
        } else {
            let mut a: u64 = 0x9e37_79b9_7f4a_7c15;
            let mut b: u64 = 0xc2b2_ae3d_27d4_eb4f;
            for (i, &c) in cells[first..first + m]
                .iter()
                .chain(&cells[second..second + m])
                .enumerate()
            {
                a = (a ^ c as u64).wrapping_mul(0x100_0000_01b3).rotate_left(17);
                b = (b ^ (c as u64 + i as u64)).wrapping_mul(0xff51_afd7_ed55_8ccd);
            }
            Some(((a as u128) << 64 | b as u128) | 1)
        }
    }
}

/// What the threads of one probe share besides the table.
struct Probe<'a> {
    /// Set to stop every thread: a spent budget or node cap, or a table that must grow.
    stop: AtomicBool,
    grow: AtomicBool,
    /// Positions searched, added by each thread every few thousand.
    nodes: AtomicU64,
    egdb_hits: AtomicU64,
    /// Set by the first thread to finish the probe: the others stop.
    done: AtomicBool,
    /// Nodes of the current call before this probe, for the budget and the node cap.
    nodes_before: u64,
    node_cap: u64,
    budget: Option<&'a Budget>,
    /// Used slots past which the table should grow (`usize::MAX` at its largest).
    grow_at: usize,
    /// Fingerprints of the positions some thread is expanding now ([`Walker::expand`]).
    busy: &'a [AtomicU64],
}

/// Slots of the table of positions being expanded: a few per thread and ply are in use at
/// once, so a collision (which only defers a move it need not) is rare.
const BUSY_LOG2: u32 = 16;

/// A position's tag in the busy table; never 0, the empty slot.
#[inline]
fn fingerprint(key: u128, side: u8) -> u64 {
    let mut z =
        (key as u64) ^ ((key >> 64) as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ side as u64;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    (z ^ (z >> 31)) | 1
}

/// Positions a thread searches between two looks at the shared flags: stop, or another
/// thread has finished the probe.
const CHECK_EVERY: u64 = 0x3ff;
/// Plies from a probe's root within which threads tell each other what they are expanding.
const SHARE_PLIES: u32 = 12;
/// Seeds in the pits beyond the database's reach below which a subtree is too small to be
/// worth deferring.
const SHARE_SEEDS: u32 = 8;

/// What [`Walker::enter`] learned of a position it could not settle.
#[derive(Clone, Copy)]
struct Entry {
    key: Option<u128>,
    side: u8,
    found: Option<(usize, Meta)>,
    /// Bounds on the gain from the seeds left and the table.
    lower: i32,
    upper: i32,
    /// The table's best move, 0 for none.
    hint: u8,
}

/// A move of the position being expanded and what it leads to.
#[derive(Clone, Copy, Default)]
struct Kid {
    mv: u8,
    over: bool,
    extra: bool,
    order: i32,
    gain: i32,
    pos: Option<Position>,
    /// The child's table key when computed ahead (`Some(None)`: it has none).
    key: Option<Option<u128>>,
    /// The child's database entry when located ahead.
    egdb_at: Option<usize>,
}

/// One thread's walk of the tree within a probe.
struct Walker<'a> {
    rules: Rules,
    table: &'a Table,
    probe: &'a Probe<'a>,
    egdb: Option<&'a Egdb>,
    egdb_seeds: u32,
    /// Whether other threads search the same probe: then the walker marks the positions it
    /// expands near the root and defers the moves another thread is busy with.
    shared: bool,
    nodes: u64,
    egdb_hits: u64,
    inserted: usize,
    aborted: bool,
}

impl<'a> Walker<'a> {
    /// Hands this walker's counters to the probe.
    fn finish(&mut self) {
        self.probe
            .nodes
            .fetch_add(self.nodes & CHECK_EVERY, Relaxed);
        self.probe.egdb_hits.fetch_add(self.egdb_hits, Relaxed);
        self.flush_inserted();
    }

    fn flush_inserted(&mut self) {
        let used = self.table.used.fetch_add(self.inserted, Relaxed) + self.inserted;
        self.inserted = 0;
        if used > self.probe.grow_at {
            self.probe.grow.store(true, Relaxed);
            self.probe.stop.store(true, Relaxed);
        }
    }

    /// Every [`CHECK_EVERY`] positions: whether to stop.
    #[cold]
    fn check(&mut self) {
        let nodes = self.probe.nodes.fetch_add(CHECK_EVERY + 1, Relaxed)
            + CHECK_EVERY
            + 1
            + self.probe.nodes_before;
        if nodes > self.probe.node_cap || self.probe.budget.is_some_and(|b| b.check(nodes)) {
            self.probe.stop.store(true, Relaxed);
        }
        self.aborted |= self.should_stop();
    }

    #[inline]
    fn should_stop(&self) -> bool {
        self.probe.stop.load(Relaxed) || self.probe.done.load(Relaxed)
    }

    /// `pos`'s gain from the database, when it covers `pos`; `at` is its entry when located
    /// ahead.
    #[inline]
    fn egdb_gain(&mut self, pos: &Position, at: Option<usize>) -> Option<i32> {
        if pos.seeds_in_pits() > self.egdb_seeds {
            return None;
        }
        let db = self.egdb?;
        let gain = match at {
            Some(at) => db.gain_at(at),
            None => db.gain(pos)?,
        };
        self.egdb_hits += 1;
        Some(gain)
    }

    /// The lowest gain the side to move can be held to: it loses at most every seed left,
    /// and at least one seed reaches its store when the move of its pit nearest the store
    /// does (it passes or ends in the store, or captures: with empty captures any landing
    /// in that pit's empty successors does).
    #[inline]
    fn floor(&self, pos: &Position, seeds: i32) -> i32 {
        if pos.swap_available() {
            return -seeds;
        }
        let me = pos.side_to_move();
        let m = pos.pits();
        let pits = pos.side_pits(me);
        let Some(j) = (0..m).rev().find(|&j| pits[j] != 0) else {
            return -seeds;
        };
        let end = j + pits[j] as usize;
        let scores = end >= m || self.rules == Rules::EmptyCapture || {
            let last = pos.first_pit(me) + end;
            pos.cells()[pos.opposite(last)] != 0
        };
        if scores {
            -seeds + 2
        } else {
            -seeds
        }
    }

    /// What is known of `pos` before expanding it: `Ok` with the value to return when the
    /// database, the seeds left or the table settle it against the window, else what the
    /// expansion needs. Counts the position as a node.
    #[inline]
    fn enter(
        &mut self,
        pos: &Position,
        alpha: i32,
        beta: i32,
        key: Option<Option<u128>>,
        egdb_at: Option<usize>,
    ) -> Result<i32, Entry> {
        self.nodes += 1;
        if self.nodes & CHECK_EVERY == 0 {
            self.check();
        }
        if self.aborted {
            return Ok(0);
        }
        if let Some(gain) = self.egdb_gain(pos, egdb_at) {
            return Ok(gain);
        }
        let seeds = gain_bound(pos);
        // The side to move can gain at most every seed left and lose at most all of them.
        if seeds <= alpha {
            return Ok(seeds);
        }
        let floor = self.floor(pos, seeds);
        if floor >= beta {
            return Ok(floor);
        }
        let key = key.unwrap_or_else(|| self.table.key(pos));
        // The pie state is part of what the value depends on. A swap-offer position's value
        // also depends on its stores (the swap hands them over), but the offer only follows
        // South's first move from a start, where the pits alone tell the position.
        let side = self.side_code(pos);
        let found = key.and_then(|key| self.table.probe(key, side));
        let mut entry = Entry {
            key,
            side,
            found,
            lower: floor,
            upper: seeds,
            hint: 0,
        };
        if let Some((_, e)) = found {
            if e.lower >= beta as i16 {
                return Ok(e.lower as i32);
            }
            if e.upper <= alpha as i16 {
                return Ok(e.upper as i32);
            }
            entry.lower = entry.lower.max(e.lower as i32);
            entry.upper = entry.upper.min(e.upper as i32);
            entry.hint = e.best;
        }
        Err(entry)
    }

    #[inline]
    fn side_code(&self, pos: &Position) -> u8 {
        (pos.pie() as u8) << 1
    }

    /// Fail-soft alpha-beta on the gain from here.
    fn search(&mut self, pos: &Position, alpha: i32, beta: i32, ply: u32) -> i32 {
        match self.enter(pos, alpha, beta, None, None) {
            Ok(value) => value,
            Err(entry) => self.expand(pos, alpha, beta, entry, ply),
        }
    }

    /// Searches the moves of `pos`, whose [`Walker::enter`] left it open. When threads share
    /// the probe, a position near the root is marked busy while it is expanded, so that the
    /// other threads search their other moves first (ABDADA).
    #[inline]
    fn expand(&mut self, pos: &Position, alpha: i32, beta: i32, entry: Entry, ply: u32) -> i32 {
        if let (true, Some(key)) = (self.shares(pos, ply), entry.key) {
            let tag = fingerprint(key, entry.side);
            let slot = &self.probe.busy[tag as usize & ((1 << BUSY_LOG2) - 1)];
            slot.store(tag, Relaxed);
            let value = self.expand_moves(pos, alpha, beta, entry, ply);
            // Another thread may have taken the slot meanwhile: its mark stays.
            let _ = slot.compare_exchange(tag, 0, Relaxed, Relaxed);
            return value;
        }
        self.expand_moves(pos, alpha, beta, entry, ply)
    }

    /// Whether `pos`, `ply` plies from the root, is large enough to tell the other threads
    /// about.
    #[inline]
    fn shares(&self, pos: &Position, ply: u32) -> bool {
        self.shared && ply < SHARE_PLIES && pos.seeds_in_pits() >= self.egdb_seeds + SHARE_SEEDS
    }

    /// Whether another thread is expanding `child` now.
    fn busy(&self, child: &Position, key: Option<Option<u128>>) -> bool {
        let Some(Some(key)) = key else { return false };
        let tag = fingerprint(key, self.side_code(child));
        self.probe.busy[tag as usize & ((1 << BUSY_LOG2) - 1)].load(Relaxed) == tag
    }

    /// [`Walker::expand`]'s search of the moves. Kept in one piece: it is the solver's hot
    /// loop (move ordering, recursion, table store share the position and bounds), and
    /// helpers would have to pass all of that through every call.
    fn expand_moves(
        &mut self,
        pos: &Position,
        alpha: i32,
        beta: i32,
        entry: Entry,
        ply: u32,
    ) -> i32 {
        let mut alpha = alpha.max(entry.lower);
        let beta = beta.min(entry.upper);
        if alpha >= beta {
            // The window closed on a bound found since the entry was read.
            return if entry.lower >= beta {
                entry.lower
            } else {
                entry.upper
            };
        }
        let original_alpha = alpha;
        let original_beta = beta;
        let best_hint = entry.hint;
        let seeds = gain_bound(pos);

        let me = pos.side_to_move();
        let m = pos.pits();
        let my_store = pos.store_index(me);
        let mut kids = [Kid::default(); 14];
        let mut n = 0;
        let legal = pos.legal_moves();
        if best_hint != 0 {
            kids[0].mv = best_hint;
            n = 1;
        }
        // Extra turns first (nearest the store first), then the rest by what they gain.
        for mv in (1..=m).rev() {
            if legal.contains(mv) && mv as u8 != best_hint && pos.landing_cell(me, mv) == my_store {
                kids[n].mv = mv as u8;
                n += 1;
            }
        }
        // Moves that pass the turn by what they put in the store, captures above all, largest
        // first; equal ones stay nearest the store first (the sort is stable). On Kalah(6,4)
        // this cut a solve's nodes 2 to 6 fold against nearest-the-store order alone.
        let passing_from = n;
        for mv in (1..=m).rev() {
            if legal.contains(mv) && mv as u8 != best_hint && pos.landing_cell(me, mv) != my_store {
                let kid = &mut kids[n];
                kid.mv = mv as u8;
                let mut child = *pos;
                let outcome = child.play_unchecked(mv, self.rules);
                kid.over = outcome.game_over;
                kid.extra = outcome.extra_turn;
                kid.order = pos.store(me) as i32 - child.store(me) as i32;
                kid.pos = Some(child);
                n += 1;
            }
        }
        kids[passing_from..n].sort_by_key(|kid| kid.order);
        if legal.contains(SWAP) && SWAP as u8 != best_hint {
            kids[n].mv = SWAP as u8;
            n += 1;
        }
        // Each child is made once, here, and searched from its copy.
        let before = pos.store_diff(me);
        for kid in &mut kids[..n] {
            let child = match kid.pos {
                Some(child) => child,
                None => {
                    let mut child = *pos;
                    let outcome = child.play_unchecked(kid.mv as usize, self.rules);
                    kid.over = outcome.game_over;
                    kid.extra = outcome.extra_turn;
                    kid.pos = Some(child);
                    child
                }
            };
            kid.gain = child.store_diff(me) - before;
        }

        let mut best = i32::MIN;
        let mut best_move = 0u8;
        let mut looked = [None::<Entry>; 14];
        // Every child is looked at before any is searched (Irving's peek, enhanced
        // transposition cutoffs): one whose game end, database entry, seeds left or
        // table entry already refutes the window ends the node at once. Their buckets and
        // database entries are fetched first, so that the children's cache misses overlap.
        for kid in &mut kids[..n] {
            let child = kid.pos.expect("played");
            if kid.over {
                continue;
            }
            if child.seeds_in_pits() > self.egdb_seeds {
                let key = self.table.key(&child);
                kid.key = Some(key);
                if let Some(key) = key {
                    let side = self.side_code(&child);
                    self.table.prefetch(self.table.bucket(key, side));
                }
            } else if let Some(db) = self.egdb {
                kid.egdb_at = db.locate(&child);
                if let Some(at) = kid.egdb_at {
                    db.prefetch(at);
                }
            }
        }
        for (i, kid) in kids[..n].iter().enumerate() {
            let child = kid.pos.expect("played");
            let value = if kid.over {
                kid.gain
            } else if kid.extra {
                match self.enter(
                    &child,
                    alpha - kid.gain,
                    beta - kid.gain,
                    kid.key,
                    kid.egdb_at,
                ) {
                    Ok(v) => kid.gain + v,
                    Err(e) => {
                        looked[i] = Some(e);
                        continue;
                    }
                }
            } else {
                match self.enter(
                    &child,
                    kid.gain - beta,
                    kid.gain - alpha,
                    kid.key,
                    kid.egdb_at,
                ) {
                    Ok(v) => kid.gain - v,
                    Err(e) => {
                        looked[i] = Some(e);
                        continue;
                    }
                }
            };
            if self.aborted {
                return 0;
            }
            if value > best {
                best = value;
                best_move = kid.mv;
                if best > alpha {
                    alpha = best;
                }
                if alpha >= beta {
                    break;
                }
            }
        }
        // ABDADA: a move that another thread is expanding now is searched last, when that
        // thread has likely stored its value; the first move never waits, so every thread
        // keeps the best ordering's path.
        let mut deferred = [0usize; 14];
        let mut n_deferred = 0;
        let mut searched = 0;
        let defer = self.shared && ply + 1 < SHARE_PLIES;
        if alpha < beta {
            for (i, kid) in kids[..n].iter().enumerate() {
                let Some(e) = looked[i] else { continue };
                let child = kid.pos.expect("played");
                searched += 1;
                if defer && searched > 1 && self.busy(&child, kid.key) {
                    deferred[n_deferred] = i;
                    n_deferred += 1;
                    continue;
                }
                let value = if kid.extra {
                    kid.gain + self.expand(&child, alpha - kid.gain, beta - kid.gain, e, ply + 1)
                } else {
                    kid.gain - self.expand(&child, kid.gain - beta, kid.gain - alpha, e, ply + 1)
                };
                if self.aborted {
                    return 0;
                }
                if value > best {
                    best = value;
                    best_move = kid.mv;
                    if best > alpha {
                        alpha = best;
                    }
                    if alpha >= beta {
                        break;
                    }
                }
            }
        }

        // The deferred moves, looked at again: the table may now settle them.
        for &i in &deferred[..n_deferred] {
            if alpha >= beta {
                break;
            }
            let kid = &kids[i];
            let child = kid.pos.expect("played");
            let value = if kid.extra {
                kid.gain + self.search(&child, alpha - kid.gain, beta - kid.gain, ply + 1)
            } else {
                kid.gain - self.search(&child, kid.gain - beta, kid.gain - alpha, ply + 1)
            };
            if self.aborted {
                return 0;
            }
            if value > best {
                best = value;
                best_move = kid.mv;
                if best > alpha {
                    alpha = best;
                }
            }
        }
        let (lower, upper) = if best <= original_alpha {
            (entry.lower.min(best), best)
        } else if best >= original_beta {
            (best, seeds)
        } else {
            (best, best)
        };
        if let Some(key) = entry.key {
            self.store(
                entry.found,
                key,
                entry.side,
                lower,
                upper,
                seeds as u16,
                best_move,
            );
        }
        best
    }

    #[allow(clippy::too_many_arguments)]
    fn store(
        &mut self,
        found: Option<(usize, Meta)>,
        key: u128,
        side: u8,
        lower: i32,
        upper: i32,
        work: u16,
        best: u8,
    ) {
        if let Some((i, _)) = found {
            // The slot may have been overwritten during the search below this node.
            if let Some((k, mut e)) = self.table.read(i) {
                if k == key && e.side == side {
                    e.lower = e.lower.max(lower as i16);
                    e.upper = e.upper.min(upper as i16);
                    e.best = best;
                    self.table.write(i, key, e);
                    return;
                }
            }
        }
        let meta = Meta {
            lower: lower as i16,
            upper: upper as i16,
            work,
            side,
            best,
        };
        if self.table.insert(key, meta) {
            self.inserted += 1;
            if self.inserted == 256 {
                self.flush_inserted();
            }
        }
    }
}

/// An exact solver with its transposition table; reuse it across calls on the same rules to
/// keep what it learned.
pub struct Solver {
    rules: Rules,
    table: Table,
    max_log2: u32,
    /// Positions searched in the current call, and since the solver was made.
    nodes: u64,
    total_nodes: u64,
    /// The current call's positions searched by the busiest thread ([`SolverStats`]).
    busiest: u64,
    /// The caller's bounds, when it has any ([`Solver::set_budget`]).
    budget: Option<Budget>,
    aborted: bool,
    /// Exact values of every position with few seeds left, read instead of searched.
    egdb: Option<Arc<Egdb>>,
    egdb_hits: u64,
    /// Most positions one call of [`Solver::best_moves_within`] may visit.
    node_cap: u64,
    /// Whether probes share their work among the threads of the current rayon pool.
    parallel: bool,
    /// The positions being expanded, shared by the threads of a probe ([`Probe::busy`]);
    /// allocated by the first parallel probe.
    busy: Vec<AtomicU64>,
    /// Where the next solve's MTD(f) probes start, as a gain ([`Solver::set_first_guess`]).
    first_guess: Option<i32>,
}

impl Solver {
    /// A solver whose table starts small and doubles as it fills, up to `2^max_log2` slots of
    /// 16 bytes each on boards of up to 6 pits, 24 on larger ones (2^24 slots take 256 or 384
    /// MiB).
    pub(crate) fn new(rules: Rules, max_log2: u32) -> Solver {
        let max_log2 = max_log2.clamp(8, 30);
        Solver {
            rules,
            table: Table::new(max_log2.min(14), 6),
            max_log2,
            nodes: 0,
            total_nodes: 0,
            busiest: 0,
            budget: None,
            aborted: false,
            egdb: None,
            egdb_hits: 0,
            node_cap: u64::MAX,
            parallel: false,
            busy: Vec::new(),
            first_guess: None,
        }
    }

    /// A solver whose table may grow to 2^24 slots.
    pub fn with_default_table(rules: Rules) -> Solver {
        Solver::new(rules, 24)
    }

    /// A solver whose table may grow to `mb` MiB (at least 256 slots, at most 2^30), counted
    /// in the 24-byte slots of the largest boards.
    pub(crate) fn with_table_mb(rules: Rules, mb: u64) -> Solver {
        let slots = (mb << 20) / 24;
        Solver::new(rules, slots.max(1).ilog2())
    }

    /// Shares each probe among the threads of the rayon pool the solve runs in (ABDADA:
    /// every thread searches the probe's whole tree through the shared table, and near the
    /// root puts off the moves another thread is expanding). Values never depend on it; node
    /// counts and times do. Callers that already run many solves at once leave it off.
    pub fn set_parallel(&mut self, parallel: bool) {
        self.parallel = parallel;
    }

    /// Reads exact values from `egdb` for the positions it covers instead of searching them.
    /// A database of other rules or another board is ignored for the positions it does not
    /// cover (`Egdb::gain` checks each).
    pub fn set_egdb(&mut self, egdb: Arc<Egdb>) {
        if egdb.rules() == self.rules {
            self.egdb = Some(egdb);
        }
    }

    /// The database this solver reads, if any.
    pub(crate) fn egdb(&self) -> Option<&Arc<Egdb>> {
        self.egdb.as_ref()
    }

    /// Positions answered by the database since the solver was made.
    pub fn egdb_hits(&self) -> u64 {
        self.egdb_hits
    }

    /// Solves from now on stop once `budget` is spent; a stopped solve's values and moves
    /// mean nothing and nothing of it enters the table, so the owner discards the result
    /// ([`Budget::stopped`]).
    pub(crate) fn set_budget(&mut self, budget: &Budget) {
        self.budget = Some(budget.clone());
    }

    /// The table's memory now.
    pub(crate) fn table_bytes(&self) -> usize {
        self.table.bytes()
    }

    /// Positions searched since the solver was made.
    pub(crate) fn total_nodes(&self) -> u64 {
        self.total_nodes
    }

    pub fn rules(&self) -> Rules {
        self.rules
    }

    /// The exact gain of the side to move from `pos` when it lies outside `alpha..beta`, and
    /// a bound on it otherwise (fail-soft); `None` once the budget or node cap is spent. A
    /// probe that fills the table is stopped, the table doubled, and the probe run again
    /// from what the table kept.
    fn probe(&mut self, pos: &Position, alpha: i32, beta: i32) -> Option<i32> {
        if self.aborted {
            return None;
        }
        if self.table.pits != pos.pits() {
            self.table = Table::new(self.max_log2.min(14), pos.pits());
        }
        let threads = if self.parallel {
            rayon::current_num_threads()
        } else {
            1
        };
        if threads > 1 && self.busy.is_empty() {
            self.busy = (0..1 << BUSY_LOG2).map(|_| AtomicU64::new(0)).collect();
        }
        loop {
            let grow_at = if self.table.len() < 1 << self.max_log2 {
                self.table.len() / 4 * 3
            } else {
                usize::MAX
            };
            let probe = Probe {
                stop: AtomicBool::new(false),
                grow: AtomicBool::new(false),
                nodes: AtomicU64::new(0),
                egdb_hits: AtomicU64::new(0),
                done: AtomicBool::new(false),
                nodes_before: self.nodes,
                node_cap: self.node_cap,
                budget: self.budget.as_ref(),
                grow_at,
                busy: &self.busy,
            };
            let egdb = self.egdb.as_deref();
            let egdb_seeds = egdb.map_or(0, |db| db.max_seeds());
            let walk = |shared: bool| {
                let mut walker = Walker {
                    rules: self.rules,
                    table: &self.table,
                    probe: &probe,
                    egdb,
                    egdb_seeds,
                    shared,
                    nodes: 0,
                    egdb_hits: 0,
                    inserted: 0,
                    aborted: false,
                };
                let value = walker.search(pos, alpha, beta, 0);
                if !walker.aborted {
                    probe.done.store(true, Relaxed);
                }
                walker.finish();
                (value, walker.aborted, walker.nodes)
            };
            let walks: Vec<(i32, bool, u64)> = if threads > 1 {
                (0..threads).into_par_iter().map(|_| walk(true)).collect()
            } else {
                vec![walk(false)]
            };
            self.busiest += walks.iter().map(|w| w.2).max().unwrap_or(0);
            // Every thread that finished proved a bound on the same side of the window; which
            // one is taken changes only the next probe's window, never the solve's value.
            let finished = walks.iter().find(|w| !w.1).map(|w| w.0);
            let nodes = probe.nodes.load(Relaxed);
            self.nodes += nodes;
            self.total_nodes += nodes;
            self.egdb_hits += probe.egdb_hits.load(Relaxed);
            if let Some(value) = finished {
                return Some(value);
            }
            if !probe.grow.load(Relaxed) || self.budget.as_ref().is_some_and(|b| b.is_stopped()) {
                self.aborted = true;
                return None;
            }
            let log2 = self.table.len().ilog2() + 1;
            self.table = self.table.resized(log2);
        }
    }

    /// Starts the next solve's probes at `value` (the value of the position solved, stores
    /// included) instead of at the current store difference. A guess near the true value
    /// saves the probes that climb to it; a wrong one costs probes but never changes the
    /// value found.
    pub(crate) fn set_first_guess(&mut self, pos: &Position, value: i32) {
        // Saturating: the guess may come from a user, and is clamped to the bounds anyway.
        self.first_guess = Some(value.saturating_sub(pos.store_diff(pos.side_to_move())));
    }

    /// Starts a call: its node count and abort state.
    fn begin(&mut self) {
        self.nodes = 0;
        self.busiest = 0;
        self.aborted = false;
    }

    /// The exact value of `pos` for the side to move: its final store minus the other side's,
    /// counting the seeds already in the stores.
    pub fn solve(&mut self, pos: &Position) -> (i32, SolverStats) {
        let (gain, stats) = self.solve_gain(pos);
        (pos.store_diff(pos.side_to_move()) + gain, stats)
    }

    /// The margin the side to move gains from here under perfect play.
    pub(crate) fn solve_gain(&mut self, pos: &Position) -> (i32, SolverStats) {
        self.solve_gain_observed(pos, &mut |_| {})
    }

    /// [`Solver::solve`], telling `observe` the bounds after every MTD(f) probe: a long solve
    /// narrows them one probe at a time, and that is its progress.
    pub(crate) fn solve_observed(
        &mut self,
        pos: &Position,
        observe: &mut dyn FnMut(&ProbeReport),
    ) -> (i32, SolverStats) {
        let offset = pos.store_diff(pos.side_to_move());
        let mut shifted = |report: &ProbeReport| {
            observe(&ProbeReport {
                lower: report.lower + offset,
                upper: report.upper + offset,
                ..*report
            })
        };
        let (gain, stats) = self.solve_gain_observed(pos, &mut shifted);
        (offset + gain, stats)
    }

    fn solve_gain_observed(
        &mut self,
        pos: &Position,
        observe: &mut dyn FnMut(&ProbeReport),
    ) -> (i32, SolverStats) {
        self.begin();
        // Taken before any early return: a guess is for this position only, never the next.
        let first_guess = self.first_guess.take();
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
        let mut guess = first_guess.unwrap_or(0).clamp(lower, upper);
        let mut probes = 0;
        while lower < upper {
            let beta = if guess == lower { guess + 1 } else { guess };
            let Some(value) = self.probe(pos, beta - 1, beta) else {
                break;
            };
            probes += 1;
            if value < beta {
                upper = value;
            } else {
                lower = value;
            }
            guess = value;
            observe(&ProbeReport {
                probe: probes,
                lower,
                upper,
                nodes: self.nodes,
            });
        }
        (
            lower,
            SolverStats {
                nodes: self.nodes,
                probes,
                busiest: self.busiest,
            },
        )
    }

    /// The database's gain for `pos`, when it covers it.
    fn egdb_gain(&mut self, pos: &Position) -> Option<i32> {
        let gain = self.egdb.as_ref()?.gain(pos)?;
        self.egdb_hits += 1;
        Some(gain)
    }

    /// The exact value of `pos` (as in [`Solver::solve`]) and every move that keeps it; no
    /// moves when the budget stopped the solve.
    ///
    /// Proving that a move keeps the value takes one null-window probe, far cheaper than
    /// solving each move exactly (a position's value can be much easier to prove than the exact
    /// value of a poor move).
    pub fn best_moves(&mut self, pos: &Position) -> (i32, Vec<usize>) {
        let (gain, _) = self.solve_gain(pos);
        let value = pos.store_diff(pos.side_to_move()) + gain;
        if pos.is_game_over() || self.aborted {
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
                self.probe(&child, bound - 1, bound)
                    .map(|v| v >= bound)
                    .unwrap_or(false)
            } else {
                // Need step - v(child) >= gain, i.e. v(child) <= step - gain.
                let bound = step - gain;
                self.probe(&child, bound, bound + 1)
                    .map(|v| v <= bound)
                    .unwrap_or(false)
            };
            if self.aborted {
                return (value, Vec::new());
            }
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

    /// [`Solver::solve`] within `max_nodes` positions: `None` when the solve needs more (what
    /// it proved on the way stays in the table), or when the caller's budget stopped it.
    /// `solve` tries this first, so that a position the search alone settles at once spends
    /// nothing on a first guess or a database build.
    pub(crate) fn solve_within(
        &mut self,
        pos: &Position,
        max_nodes: u64,
    ) -> Option<(i32, SolverStats)> {
        self.node_cap = max_nodes;
        let found = self.solve(pos);
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
}
