//! What the runner keeps in the database: batch results and the run's claim, behind
//! [`BatchStore`], which the store implements. The runner sits below the store and holds no
//! SQL of its own for them.

use futures_util::future::BoxFuture;

/// One slice of one job list of a run's generation: `jobs` consecutive jobs from `first_job`.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize, utoipa::ToSchema)]
pub struct SliceKey {
    pub run_id: String,
    pub generation: u32,
    /// 0 for the games fixed in advance, then one per racing round.
    pub part: u32,
    pub first_job: u64,
    pub jobs: u64,
}

/// What became of a batch result a worker wrote.
#[derive(Clone, Debug, PartialEq)]
pub enum ResultWrite {
    Written,
    /// The slice already had this very result (a batch run twice, by a worker that was
    /// thought dead and another).
    Same,
    /// The slice already had another result: the games are not deterministic.
    Different {
        stored: Vec<f64>,
    },
}

/// A batch worker as it registers itself: the name it writes its results under, the machine
/// it runs on, and the game threads it plays with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct WorkerInfo {
    pub name: String,
    pub host: String,
    pub threads: u32,
}

/// One slice's stored result.
#[derive(Clone, Debug)]
pub(crate) struct SliceResult {
    pub key: SliceKey,
    pub points: Vec<f64>,
    /// The wall milliseconds its worker took to play it.
    pub play_ms: u64,
    /// The processor milliseconds its worker's threads used to play it (0 when not measured).
    pub processor_ms: u64,
}

/// A failed read or write of the store ([`BatchStore`], [`super::RunStore`]).
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct StoreAccessError {
    pub message: String,
    /// The database may answer again later (a lost connection, a restarting server): worth
    /// waiting out rather than failing the run.
    pub transient: bool,
}

impl super::outage::Transient for StoreAccessError {
    fn is_transient(&self) -> bool {
        self.transient
    }
}

pub(crate) type StoreFuture<'a, T> = BoxFuture<'a, Result<T, StoreAccessError>>;

/// The persistence the runner needs, implemented by [`crate::store::Store`].
pub(crate) trait BatchStore: Send + Sync {
    /// The run's claim while it is running; `None` once it is not (cancelled, deleted,
    /// failed, finished).
    fn running_claim<'a>(&'a self, run_id: &'a str) -> StoreFuture<'a, Option<i64>>;

    /// Fails a running run whoever owns it (a batch that gave two different results, a
    /// batch that can never be played).
    fn fail_running<'a>(&'a self, run_id: &'a str, error: &'a str) -> StoreFuture<'a, ()>;

    /// Writes the points of a slice once, with the wall and processor milliseconds its
    /// worker took to play it; see [`ResultWrite`].
    fn put_slice_result<'a>(
        &'a self,
        key: &'a SliceKey,
        points: &'a [f64],
        worker: &'a str,
        play_ms: u64,
        processor_ms: u64,
    ) -> StoreFuture<'a, ResultWrite>;

    /// The slices of one job list that have results: their `(first_job, jobs)` only.
    fn slices_done<'a>(
        &'a self,
        run_id: &'a str,
        generation: u32,
        part: u32,
    ) -> StoreFuture<'a, Vec<(u64, u64)>>;

    /// Every stored slice result of one job list.
    fn slice_results<'a>(
        &'a self,
        run_id: &'a str,
        generation: u32,
        part: u32,
    ) -> StoreFuture<'a, Vec<SliceResult>>;

    /// Registers a batch worker that starts (or starts again under the same name).
    fn register_worker<'a>(&'a self, worker: &'a WorkerInfo) -> StoreFuture<'a, ()>;

    /// A worker's heartbeat with the batch it plays (`None`: waiting for one).
    fn worker_beat<'a>(&'a self, name: &'a str, batch: Option<&'a SliceKey>)
        -> StoreFuture<'a, ()>;

    /// A worker that stopped, cleanly: it plays nothing any more.
    fn worker_stopped<'a>(&'a self, name: &'a str) -> StoreFuture<'a, ()>;
}
