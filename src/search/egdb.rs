//! Endgame databases: the exact value of every position with at most `K` seeds left in the
//! pits of a Kalah(m, ·) board, built by retrograde analysis and read memory-mapped.
//!
//! The value of a position depends only on its pits and who moves (see `super::solver`):
//! an entry is the margin the side to move gains from here under perfect play, one signed
//! byte. Positions are written from the mover's point of view (its `m` pits, then the
//! opponent's `m` pits in sowing order), so one table serves both sides.
//!
//! **Index.** Positions are grouped by the seeds `k` left in the pits, levels `0..=K` one
//! after the other; inside a level a board is ranked by the combinatorial number system over
//! compositions of `k` into `2m` parts (lexicographic, first pit most significant). Level
//! `k` holds `C(k + 2m - 1, 2m - 1)` boards, the whole database `C(K + 2m, 2m)`.
//!
//! **Build.** A move either puts seeds into a store (a sowing that passes the mover's store,
//! or a capture), which leads to a lower level, already built, or it keeps every seed in the
//! pits and passes the turn. The latter moves seeds strictly towards the mover's store along
//! its own row (a seed reaches the other row only through a store), so inside a level the
//! positions form an acyclic graph: each level is computed by a memoized search over that
//! graph, on all cores, with children in lower levels read from the finished table.
//!
//! **File.** A fixed 64-byte header (magic, format version, pits, seeds, rules, entries, a
//! CRC-32 of the entries) then one byte an entry; [`Egdb::open`] checks all of it and maps
//! the file read-only.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use memmap2::Mmap;
use rayon::prelude::*;

use crate::game::{Pie, Position, Rules, Side};

/// Boards of at most this many pits a side have a database: 2m parts must fit the index.
pub(crate) const MAX_EGDB_PITS: usize = 8;
/// At most this many seeds in the pits: values stay within a signed byte.
pub(crate) const MAX_EGDB_SEEDS: u32 = 64;
/// Databases larger than this many entries (bytes) are refused: they would not fit the
/// memory of the machines this runs on.
pub(crate) const MAX_EGDB_ENTRIES: u64 = 16 << 30;

const MAGIC: &[u8; 8] = b"KTEGDB\0\0";
const FORMAT_VERSION: u32 = 1;
const HEADER_LEN: usize = 64;
/// Marks an entry not computed yet while a level is built; no value reaches it.
const UNKNOWN: u8 = 0x80;
/// Entries a build task takes at a time.
const CHUNK: u64 = 1 << 15;

#[derive(Debug, thiserror::Error)]
pub enum EgdbError {
    #[error("endgame databases cover 1 to {MAX_EGDB_PITS} pits a side, not {0}")]
    Pits(usize),
    #[error("endgame databases hold at most {MAX_EGDB_SEEDS} seeds in the pits, not {0}")]
    Seeds(u32),
    #[error(
        "a database of {pits} pits and up to {seeds} seeds would hold {entries} entries \
         ({gib:.1} GiB): at most {max_gib} GiB are supported"
    )]
    TooLarge {
        pits: usize,
        seeds: u32,
        entries: u64,
        gib: f64,
        max_gib: u64,
    },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("no memory for the database being built: {0}")]
    Memory(std::io::Error),
    #[error("{path} is not a kalah-tuner endgame database: {reason}")]
    Corrupt { path: PathBuf, reason: String },
}

fn io_error(path: &Path) -> impl FnOnce(std::io::Error) -> EgdbError + '_ {
    move |source| EgdbError::Io {
        path: path.to_path_buf(),
        source,
    }
}

fn rules_code(rules: Rules) -> u32 {
    match rules {
        Rules::Standard => 0,
        Rules::EmptyCapture => 1,
    }
}

fn rules_from_code(code: u32) -> Option<Rules> {
    match code {
        0 => Some(Rules::Standard),
        1 => Some(Rules::EmptyCapture),
        _ => None,
    }
}

/// `C(n, k)` for the small arguments of the index (exact in 64 bits up to `C(80, 16)`).
fn binomial(n: u64, k: u64) -> u64 {
    if k > n {
        return 0;
    }
    let k = k.min(n - k);
    let mut result: u128 = 1;
    for i in 0..k {
        result = result * (n - i) as u128 / (i + 1) as u128;
    }
    result as u64
}

/// The ranking of boards of one shape (`parts` pits in all, up to `max_seeds` seeds).
#[derive(Clone, Debug)]
pub(crate) struct EgdbIndex {
    parts: usize,
    max_seeds: u32,
    /// `before[q][r][v]`: compositions of `r` into `q` parts whose first part is below `v`.
    before: Vec<u64>,
    /// First entry of each level; `level_start[K + 1]` is the size of the database.
    level_start: Vec<u64>,
}

impl EgdbIndex {
    pub(crate) fn new(pits: usize, max_seeds: u32) -> Result<EgdbIndex, EgdbError> {
        if pits == 0 || pits > MAX_EGDB_PITS {
            return Err(EgdbError::Pits(pits));
        }
        if max_seeds > MAX_EGDB_SEEDS {
            return Err(EgdbError::Seeds(max_seeds));
        }
        let parts = 2 * pits;
        let seeds = max_seeds as usize;
        let width = seeds + 2;
        let mut before = vec![0u64; (parts + 1) * (seeds + 1) * width];
        for q in 2..=parts {
            for r in 0..=seeds {
                let mut sum = 0;
                for v in 0..=r + 1 {
                    before[(q * (seeds + 1) + r) * width + v] = sum;
                    if v <= r {
                        // Compositions of the remaining r - v seeds into q - 1 parts.
                        sum += binomial((r - v + q - 2) as u64, (q - 2) as u64);
                    }
                }
            }
        }
        let level_start = (0..=max_seeds as u64 + 1)
            .map(|k| {
                if k == 0 {
                    0
                } else {
                    binomial(k - 1 + parts as u64, parts as u64)
                }
            })
            .collect::<Vec<_>>();
        let entries = level_start[seeds + 1];
        if entries > MAX_EGDB_ENTRIES {
            return Err(EgdbError::TooLarge {
                pits,
                seeds: max_seeds,
                entries,
                gib: entries as f64 / (1u64 << 30) as f64,
                max_gib: MAX_EGDB_ENTRIES >> 30,
            });
        }
        Ok(EgdbIndex {
            parts,
            max_seeds,
            before,
            level_start,
        })
    }

    pub(crate) fn pits(&self) -> usize {
        self.parts / 2
    }

    pub(crate) fn max_seeds(&self) -> u32 {
        self.max_seeds
    }

    /// Entries (bytes) of the whole database.
    pub(crate) fn entries(&self) -> u64 {
        self.level_start[self.max_seeds as usize + 1]
    }

    /// Entries of level `k` (boards with exactly `k` seeds in the pits).
    pub(crate) fn level_len(&self, k: u32) -> u64 {
        self.level_start[k as usize + 1] - self.level_start[k as usize]
    }

    #[inline]
    fn before(&self, q: usize, r: usize, v: usize) -> u64 {
        let seeds = self.max_seeds as usize;
        self.before[(q * (seeds + 1) + r) * (seeds + 2) + v]
    }

    /// The entry of `board` (the mover's pits, then the opponent's) holding `k` seeds, which
    /// must be at most the database's seeds.
    #[inline]
    pub(crate) fn rank(&self, board: &[u8], k: u32) -> u64 {
        let mut index = self.level_start[k as usize];
        let mut rest = k as usize;
        for (i, &v) in board[..self.parts - 1].iter().enumerate() {
            let v = v as usize;
            index += self.before(self.parts - i, rest, v);
            rest -= v;
        }
        index
    }

    /// The board at `offset` within level `k`.
    fn unrank(&self, k: u32, mut offset: u64) -> [u8; 2 * MAX_EGDB_PITS] {
        let mut board = [0u8; 2 * MAX_EGDB_PITS];
        let mut rest = k as usize;
        for (i, slot) in board[..self.parts - 1].iter_mut().enumerate() {
            let q = self.parts - i;
            // The largest v whose `before` does not pass the offset.
            let mut v = 0;
            while v < rest && self.before(q, rest, v + 1) <= offset {
                v += 1;
            }
            offset -= self.before(q, rest, v);
            *slot = v as u8;
            rest -= v;
        }
        board[self.parts - 1] = rest as u8;
        board
    }
}

/// The board that follows `board` within its level in rank order; false after the last.
#[inline]
fn next_board(board: &mut [u8]) -> bool {
    let parts = board.len();
    // The rightmost part but the last that can grow takes one seed from the tail, and the
    // tail restarts with everything in its last part.
    let mut tail = board[parts - 1] as u32;
    for i in (0..parts - 1).rev() {
        if tail > 0 {
            board[i] += 1;
            for b in &mut board[i + 1..] {
                *b = 0;
            }
            board[parts - 1] = (tail - 1) as u8;
            return true;
        }
        tail += board[i] as u32;
    }
    false
}

/// What a move does to a board written from the mover's point of view.
#[derive(Clone, Copy)]
struct Played {
    /// Seeds the mover gained: sown into its store, and captured.
    gain: i32,
    /// The game ended; the pits were swept, and `gain` is the whole margin of the move.
    over: bool,
    /// The mover moves again (the board stays in its point of view); otherwise the board is
    /// turned to the opponent's point of view.
    again: bool,
}

/// Plays pit `pit` (0-based) of the mover on `board` (2m parts) under `rules`.
#[inline]
fn play(board: &mut [u8], m: usize, pit: usize, rules: Rules) -> Played {
    let cycle = 2 * m + 1;
    let mut seeds = board[pit] as usize;
    board[pit] = 0;
    let mut gain = 0i32;
    // Offsets along the mover's cycle: 0..m its pits, m its store, m+1..=2m the opponent's.
    let laps = seeds / cycle;
    if laps > 0 {
        for b in board.iter_mut() {
            *b += laps as u8;
        }
        gain += laps as i32;
        seeds -= laps * cycle;
    }
    let mut offset = pit;
    for _ in 0..seeds {
        offset += 1;
        if offset == cycle {
            offset = 0;
        }
        if offset == m {
            gain += 1;
        } else if offset < m {
            board[offset] += 1;
        } else {
            board[offset - 1] += 1;
        }
    }
    let mut again = false;
    if offset == m && (seeds > 0 || laps > 0) {
        again = true;
    } else if offset < m && board[offset] == 1 {
        let opposite = m + (m - 1 - offset);
        let taken = board[opposite];
        if taken > 0 || rules == Rules::EmptyCapture {
            gain += taken as i32 + 1;
            board[opposite] = 0;
            board[offset] = 0;
        }
    }
    let mine: i32 = board[..m].iter().map(|&b| b as i32).sum();
    let theirs: i32 = board[m..2 * m].iter().map(|&b| b as i32).sum();
    if mine == 0 || theirs == 0 {
        return Played {
            gain: gain + mine - theirs,
            over: true,
            again,
        };
    }
    if !again {
        let (me, them) = board.split_at_mut(m);
        me.swap_with_slice(&mut them[..m]);
    }
    Played {
        gain,
        over: false,
        again,
    }
}

/// Writes `pos`'s pits from the side to move's point of view into `board`; the seeds in them.
#[inline]
fn board_of(pos: &Position, board: &mut [u8; 2 * MAX_EGDB_PITS]) -> u32 {
    let me = pos.side_to_move();
    let m = pos.pits();
    let mut seeds = 0;
    for (b, &c) in board[..m].iter_mut().zip(pos.side_pits(me)) {
        *b = c as u8;
        seeds += c as u32;
    }
    for (b, &c) in board[m..2 * m].iter_mut().zip(pos.side_pits(me.opponent())) {
        *b = c as u8;
        seeds += c as u32;
    }
    seeds
}

/// Where a database's entries live: built in memory, or mapped from its file.
enum Entries {
    /// Anonymous memory and the entries' length (the map is at least one byte).
    Built(memmap2::MmapMut, usize),
    Mapped(Mmap),
}

impl Entries {
    fn bytes(&self) -> &[u8] {
        match self {
            Entries::Built(map, len) => &map[..*len],
            Entries::Mapped(m) => &m[HEADER_LEN..],
        }
    }
}

/// An endgame database of one board size and rule set.
pub struct Egdb {
    index: EgdbIndex,
    rules: Rules,
    entries: Entries,
}

impl std::fmt::Debug for Egdb {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Egdb(Kalah({}, ·) {} up to {} seeds, {} entries)",
            self.pits(),
            self.rules,
            self.max_seeds(),
            self.index.entries()
        )
    }
}

/// Progress of a build: levels and entries done so far.
pub trait BuildObserver: Sync {
    /// Level `k` starts; it holds `len` entries.
    fn level(&self, _k: u32, _len: u64) {}
    /// `n` more entries are done.
    fn advance(&self, _n: u64) {}
}

/// A build nobody watches.
pub struct Quiet;
impl BuildObserver for Quiet {}

impl Egdb {
    /// Builds the database of `pits`-pit boards with up to `max_seeds` seeds in the pits, on
    /// the current rayon pool, in memory.
    pub fn build(
        pits: usize,
        max_seeds: u32,
        rules: Rules,
        observer: &dyn BuildObserver,
    ) -> Result<Egdb, EgdbError> {
        let index = EgdbIndex::new(pits, max_seeds)?;
        let len = index.entries() as usize;
        let mut map = memmap2::MmapOptions::new()
            .len(len.max(1))
            .map_anon()
            .map_err(EgdbError::Memory)?;
        #[cfg(target_os = "linux")]
        {
            // Every child's entry lies anywhere in the table: on 4 KiB pages nearly each
            // prefetch of one also misses the TLB and waits for a page walk.
            let _ = map.advise(memmap2::Advice::HugePage);
        }
        map.fill(UNKNOWN);
        // SAFETY: the map is `len` bytes long, lives until the end of this function (the
        // table borrows it) and AtomicU8 has the size and alignment of u8.
        let table: &[AtomicU8] =
            unsafe { std::slice::from_raw_parts(map.as_ptr() as *const AtomicU8, len) };
        let builder = Builder {
            index: &index,
            rules,
            table,
        };
        for k in 0..=max_seeds {
            let len = index.level_len(k);
            observer.level(k, len);
            let chunks = len.div_ceil(CHUNK);
            let done = AtomicU64::new(0);
            (0..chunks).into_par_iter().for_each(|c| {
                let first = c * CHUNK;
                let count = CHUNK.min(len - first);
                let mut board = index.unrank(k, first);
                let parts = 2 * pits;
                let at = index.level_start[k as usize] + first;
                // Positions are made and their children asked of memory AHEAD positions
                // before they are valued, so that the misses of several positions overlap.
                let mut ring = [Pending::EMPTY; AHEAD];
                let ahead = (AHEAD as u64).min(count);
                for (i, slot) in ring.iter_mut().enumerate().take(ahead as usize) {
                    builder.prepare(&board[..parts], k, at + i as u64, slot);
                    next_board(&mut board[..parts]);
                }
                for i in 0..count {
                    let slot = &mut ring[i as usize % AHEAD];
                    builder.finish(slot);
                    if i + ahead < count {
                        builder.prepare(&board[..parts], k, at + i + ahead, slot);
                        next_board(&mut board[..parts]);
                    }
                }
                done.fetch_add(count, Ordering::Relaxed);
                observer.advance(count);
            });
        }
        Ok(Egdb {
            index,
            rules,
            entries: Entries::Built(map, len),
        })
    }

    /// The file name of the database of `pits`, `max_seeds` and `rules` in a cache folder.
    pub fn file_name(pits: usize, max_seeds: u32, rules: Rules) -> String {
        format!("kalah-{pits}-{}-{max_seeds}.egdb", rules.name())
    }

    /// Writes the database to `path` (through a temporary file beside it, renamed at the end,
    /// so a reader never sees half a file).
    pub fn write(&self, path: &Path) -> Result<(), EgdbError> {
        let bytes = self.entries.bytes();
        let temp = path.with_extension("egdb.part");
        let file = File::create(&temp).map_err(io_error(&temp))?;
        let mut out = BufWriter::with_capacity(1 << 20, file);
        out.write_all(&self.header(crc32fast::hash(bytes)))
            .and_then(|_| out.write_all(bytes))
            .and_then(|_| out.flush())
            .map_err(io_error(&temp))?;
        let file = out
            .into_inner()
            .map_err(|e| io_error(&temp)(e.into_error()))?;
        file.sync_all().map_err(io_error(&temp))?;
        std::fs::rename(&temp, path).map_err(io_error(path))?;
        Ok(())
    }

    fn header(&self, crc: u32) -> [u8; HEADER_LEN] {
        let mut header = [0u8; HEADER_LEN];
        header[..8].copy_from_slice(MAGIC);
        header[8..12].copy_from_slice(&FORMAT_VERSION.to_le_bytes());
        header[12..16].copy_from_slice(&(self.pits() as u32).to_le_bytes());
        header[16..20].copy_from_slice(&self.max_seeds().to_le_bytes());
        header[20..24].copy_from_slice(&rules_code(self.rules).to_le_bytes());
        header[24..32].copy_from_slice(&self.index.entries().to_le_bytes());
        header[32..36].copy_from_slice(&crc.to_le_bytes());
        header
    }

    /// Maps the database file at `path` read-only after checking its header, its size and
    /// the checksum of its entries.
    pub fn open(path: &Path) -> Result<Egdb, EgdbError> {
        let corrupt = |reason: String| EgdbError::Corrupt {
            path: path.to_path_buf(),
            reason,
        };
        let file = File::open(path).map_err(io_error(path))?;
        // SAFETY: the map is read-only and the file is ours (written whole and renamed into
        // place); a file truncated under a running reader is outside what we promise.
        let map = unsafe { Mmap::map(&file) }.map_err(io_error(path))?;
        if map.len() < HEADER_LEN || &map[..8] != MAGIC {
            return Err(corrupt("no database header".into()));
        }
        let word = |at: usize| u32::from_le_bytes([map[at], map[at + 1], map[at + 2], map[at + 3]]);
        if word(8) != FORMAT_VERSION {
            return Err(corrupt(format!(
                "format version {} (this program reads {FORMAT_VERSION}): build it again",
                word(8)
            )));
        }
        let pits = word(12) as usize;
        let max_seeds = word(16);
        let rules = rules_from_code(word(20))
            .ok_or_else(|| corrupt(format!("unknown rules code {}", word(20))))?;
        let mut entries = [0u8; 8];
        entries.copy_from_slice(&map[24..32]);
        let entries = u64::from_le_bytes(entries);
        let index = EgdbIndex::new(pits, max_seeds).map_err(|e| corrupt(e.to_string()))?;
        if entries != index.entries() || (map.len() - HEADER_LEN) as u64 != entries {
            return Err(corrupt(format!(
                "{} bytes of entries where Kalah({pits}) up to {max_seeds} seeds needs {}",
                map.len() - HEADER_LEN,
                index.entries()
            )));
        }
        if crc32fast::hash(&map[HEADER_LEN..]) != word(32) {
            return Err(corrupt("the entries do not match their checksum".into()));
        }
        Ok(Egdb {
            index,
            rules,
            entries: Entries::Mapped(map),
        })
    }

    /// The largest database for `pits` and `rules` in `dir`, if any.
    pub fn open_largest(dir: &Path, pits: usize, rules: Rules) -> Result<Option<Egdb>, EgdbError> {
        for seeds in (0..=MAX_EGDB_SEEDS).rev() {
            let path = dir.join(Egdb::file_name(pits, seeds, rules));
            if path.is_file() {
                return Egdb::open(&path).map(Some);
            }
        }
        Ok(None)
    }

    pub fn pits(&self) -> usize {
        self.index.pits()
    }

    pub fn max_seeds(&self) -> u32 {
        self.index.max_seeds()
    }

    pub fn rules(&self) -> Rules {
        self.rules
    }

    /// Bytes of entries.
    pub(crate) fn entries(&self) -> u64 {
        self.index.entries()
    }

    /// Whether the database answers for `pos` under `rules`.
    #[inline]
    pub(crate) fn covers(&self, pos: &Position, rules: Rules) -> bool {
        rules == self.rules
            && pos.pits() == self.pits()
            && pos.pie() == Pie::Off
            && pos.seeds_in_pits() <= self.max_seeds()
    }

    /// The margin the side to move gains from `pos` under perfect play (add the store
    /// difference for the final margin), when the database covers it.
    #[inline]
    pub(crate) fn gain(&self, pos: &Position) -> Option<i32> {
        self.locate(pos).map(|at| self.gain_at(at))
    }

    /// The entry of `pos`, when the database covers it: for [`Egdb::prefetch`] now and
    /// [`Egdb::gain_at`] later.
    #[inline]
    pub(crate) fn locate(&self, pos: &Position) -> Option<usize> {
        if pos.pits() != self.pits() || pos.pie() != Pie::Off {
            return None;
        }
        let mut board = [0u8; 2 * MAX_EGDB_PITS];
        let seeds = board_of(pos, &mut board);
        if seeds > self.max_seeds() {
            return None;
        }
        Some(self.index.rank(&board[..2 * self.pits()], seeds) as usize)
    }

    /// The gain stored at entry `at` (from [`Egdb::locate`]).
    #[inline]
    pub(crate) fn gain_at(&self, at: usize) -> i32 {
        self.entries.bytes()[at] as i8 as i32
    }

    /// Asks the processor to fetch entry `at`, which will be read soon: a search that locates
    /// all of a node's children first has their cache misses overlap.
    #[inline]
    pub(crate) fn prefetch(&self, at: usize) {
        prefetch(&self.entries.bytes()[at..]);
    }

    /// The exact final margin of `pos` for the side to move, stores included.
    pub fn value(&self, pos: &Position) -> Option<i32> {
        self.gain(pos)
            .map(|gain| gain + pos.store_diff(pos.side_to_move()))
    }
}

/// Asks the processor to fetch the cache line that `rest` starts with.
#[inline]
fn prefetch<T>(rest: &[T]) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is only a hint and never faults; the address lies inside `rest`.
    unsafe {
        std::arch::x86_64::_mm_prefetch(rest.as_ptr() as *const i8, std::arch::x86_64::_MM_HINT_T0)
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = rest;
}

/// Fills one level of the table.
struct Builder<'a> {
    index: &'a EgdbIndex,
    rules: Rules,
    table: &'a [AtomicU8],
}

impl Builder<'_> {
    /// The gain of `board` (with `k` seeds, at entry `at`), computing it and the same-level
    /// positions it needs when not known yet. Two threads may compute one entry at once: both
    /// write the same value.
    fn value(&self, board: &[u8], k: u32, at: u64) -> i32 {
        let known = self.table[at as usize].load(Ordering::Relaxed);
        if known != UNKNOWN {
            return known as i8 as i32;
        }
        let mut pending = Pending::EMPTY;
        self.prepare(board, k, at, &mut pending);
        self.finish(&pending)
    }

    /// Makes the children of `board` and asks memory for their entries, without reading
    /// them: the table is far larger than the caches, and the reads of several positions
    /// then wait for memory together, not one after another (one read per child was most
    /// of the build's time).
    #[inline]
    fn prepare(&self, board: &[u8], k: u32, at: u64, pending: &mut Pending) {
        let m = board.len() / 2;
        pending.at = at;
        pending.count = 0;
        pending.settled = None;
        let known = self.table[at as usize].load(Ordering::Relaxed);
        if known != UNKNOWN {
            // Valued already, as a same-level child of a position before it.
            pending.settled = Some(known as i8 as i32);
            return;
        }
        let mine: i32 = board[..m].iter().map(|&b| b as i32).sum();
        let theirs = k as i32 - mine;
        if mine == 0 || theirs == 0 {
            pending.settled = Some(mine - theirs);
            return;
        }
        for pit in (0..m).filter(|&pit| board[pit] > 0) {
            let child = &mut pending.children[pending.count];
            child.board[..2 * m].copy_from_slice(board);
            child.played = play(&mut child.board[..2 * m], m, pit, self.rules);
            if !child.played.over {
                child.left = k - child.played.gain as u32;
                child.at = self.index.rank(&child.board[..2 * m], child.left);
                prefetch(&self.table[child.at as usize..]);
            }
            pending.count += 1;
        }
    }

    /// The gain of a prepared position, stored in its entry (unless it is known already).
    fn finish(&self, pending: &Pending) -> i32 {
        let known = self.table[pending.at as usize].load(Ordering::Relaxed);
        if known != UNKNOWN {
            return known as i8 as i32;
        }
        let m = self.index.pits();
        let value = match pending.settled {
            Some(value) => value,
            None => pending.children[..pending.count]
                .iter()
                .map(|child| {
                    let played = &child.played;
                    if played.over {
                        return played.gain;
                    }
                    let rest = self.value(&child.board[..2 * m], child.left, child.at);
                    if played.again {
                        played.gain + rest
                    } else {
                        played.gain - rest
                    }
                })
                .max()
                .unwrap_or(i32::MIN),
        };
        self.table[pending.at as usize].store(value as i8 as u8, Ordering::Relaxed);
        value
    }
}

/// Positions of a level prepared ahead of the one being valued.
const AHEAD: usize = 4;

/// A position whose children are made and asked of memory ([`Builder::prepare`]).
#[derive(Clone, Copy)]
struct Pending {
    at: u64,
    count: usize,
    /// The value when the game is over in it (one side's pits are empty).
    settled: Option<i32>,
    children: [Child; MAX_EGDB_PITS],
}

impl Pending {
    const EMPTY: Pending = Pending {
        at: 0,
        count: 0,
        settled: None,
        children: [Child::EMPTY; MAX_EGDB_PITS],
    };
}

/// One move of a position being built: the board after it and where its entry is.
#[derive(Clone, Copy)]
struct Child {
    board: [u8; 2 * MAX_EGDB_PITS],
    played: Played,
    /// Seeds left in the pits and the entry of `board` (when the game goes on).
    left: u32,
    at: u64,
}

impl Child {
    const EMPTY: Child = Child {
        board: [0; 2 * MAX_EGDB_PITS],
        played: Played {
            gain: 0,
            over: true,
            again: false,
        },
        left: 0,
        at: 0,
    };
}

/// The folder databases are built into and looked up in: `KALAH_TUNER_EGDB_DIR`, else the
/// user's cache folder (`$XDG_CACHE_HOME/kalah-tuner/egdb`, `~/.cache/kalah-tuner/egdb`).
pub(crate) fn default_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("KALAH_TUNER_EGDB_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    if let Some(cache) = std::env::var_os("XDG_CACHE_HOME").filter(|d| !d.is_empty()) {
        return PathBuf::from(cache).join("kalah-tuner").join("egdb");
    }
    match std::env::var_os("HOME").filter(|d| !d.is_empty()) {
        Some(home) => PathBuf::from(home)
            .join(".cache")
            .join("kalah-tuner")
            .join("egdb"),
        None => std::env::temp_dir().join("kalah-tuner-egdb"),
    }
}

/// The largest database of `default_dir` for `pits` and `rules`, opened once per process
/// and shared by every agent and solver that asks (opening checks the whole file's checksum,
/// and the pages are then shared anyway). `None`, also remembered, when there is none.
pub(crate) fn shared(pits: usize, rules: Rules) -> Result<Option<Arc<Egdb>>, EgdbError> {
    type Opened = Mutex<HashMap<(usize, Rules), Option<Arc<Egdb>>>>;
    static OPENED: OnceLock<Opened> = OnceLock::new();
    let mut opened = OPENED
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(found) = opened.get(&(pits, rules)) {
        return Ok(found.clone());
    }
    let found = Egdb::open_largest(&default_dir(), pits, rules)?.map(Arc::new);
    opened.insert((pits, rules), found.clone());
    Ok(found)
}

/// The position a database board (the mover's pits, then the opponent's) stands for, with
/// `side` to move and empty stores.
pub fn position_of(board: &[u8], side: Side) -> Option<Position> {
    let m = board.len() / 2;
    let mine: Vec<u32> = board[..m].iter().map(|&b| b as u32).collect();
    let theirs: Vec<u32> = board[m..].iter().map(|&b| b as u32).collect();
    let (south, north) = match side {
        Side::South => (mine, theirs),
        Side::North => (theirs, mine),
    };
    Position::new(&south, 0, &north, 0, side).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_are_a_bijection_in_order() {
        let index = EgdbIndex::new(3, 5).unwrap();
        for k in 0..=5 {
            let mut board = index.unrank(k, 0);
            for i in 0..index.level_len(k) {
                assert_eq!(
                    index.rank(&board[..6], k),
                    index.level_start[k as usize] + i
                );
                assert_eq!(board, index.unrank(k, i));
                let more = next_board(&mut board[..6]);
                assert_eq!(more, i + 1 < index.level_len(k));
            }
        }
    }

    #[test]
    fn sizes_follow_the_binomials() {
        let index = EgdbIndex::new(6, 20).unwrap();
        assert_eq!(index.entries(), binomial(32, 12));
        assert_eq!(index.level_len(20), binomial(31, 11));
        assert!(matches!(
            EgdbIndex::new(6, 40),
            Err(EgdbError::TooLarge { .. })
        ));
        assert!(matches!(EgdbIndex::new(9, 4), Err(EgdbError::Pits(9))));
    }
}
