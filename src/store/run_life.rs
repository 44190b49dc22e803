//! A run's life as the runner's [`Executor`](crate::runner::Executor) keeps it: the store's
//! side of [`RunStore`], over the same conditional writes the rest of the store uses.

use std::time::Duration;

use super::{Store, StoreError};
use crate::runner::{ClaimedRun, RecordWrite, RunStore, StoreAccessError, StoreFuture};
use crate::tune::{GenerationRecord, HallOfFame, StopReason};

impl From<StoreError> for StoreAccessError {
    fn from(e: StoreError) -> StoreAccessError {
        StoreAccessError {
            transient: e.is_transient(),
            message: e.to_string(),
        }
    }
}

impl RunStore for Store {
    fn claim_next<'a>(&'a self, owner: &'a str) -> StoreFuture<'a, Option<ClaimedRun>> {
        Box::pin(async move {
            Ok(Store::claim_next(self, owner).await?.map(|run| {
                let config = run.config().cloned();
                ClaimedRun {
                    id: run.id,
                    claim: run.claim,
                    config,
                }
            }))
        })
    }

    fn run_records<'a>(
        &'a self,
        run_id: &'a str,
        all: bool,
    ) -> StoreFuture<'a, Vec<GenerationRecord>> {
        Box::pin(async move {
            Ok(match all {
                true => self.records(run_id).await?,
                false => self.last_record(run_id).await?.into_iter().collect(),
            })
        })
    }

    fn renew_lease<'a>(&'a self, run_id: &'a str, claim: i64) -> StoreFuture<'a, bool> {
        Box::pin(async move { Ok(self.heartbeat(run_id, claim).await?) })
    }

    fn write_record<'a>(
        &'a self,
        run_id: &'a str,
        claim: i64,
        record: &'a GenerationRecord,
        champion: &'a HallOfFame,
        processor: Duration,
    ) -> StoreFuture<'a, RecordWrite> {
        Box::pin(async move {
            Ok(self
                .write_generation(run_id, claim, record, champion, processor)
                .await?)
        })
    }

    fn add_processor_time<'a>(
        &'a self,
        run_id: &'a str,
        processor: Duration,
    ) -> StoreFuture<'a, ()> {
        Box::pin(async move { Ok(Store::add_processor_time(self, run_id, processor).await?) })
    }

    fn finish_run<'a>(
        &'a self,
        run_id: &'a str,
        claim: i64,
        stop: Option<StopReason>,
    ) -> StoreFuture<'a, ()> {
        Box::pin(async move { Ok(self.finish(run_id, claim, stop).await?) })
    }

    fn fail_run<'a>(&'a self, run_id: &'a str, claim: i64, error: &'a str) -> StoreFuture<'a, ()> {
        Box::pin(async move { Ok(self.fail(run_id, claim, error).await?) })
    }

    fn release_run<'a>(&'a self, run_id: &'a str, claim: i64) -> StoreFuture<'a, bool> {
        Box::pin(async move { Ok(self.release(run_id, claim).await?) })
    }

    fn should_yield<'a>(&'a self, run_id: &'a str) -> StoreFuture<'a, bool> {
        Box::pin(async move { Ok(self.should_yield(run_id).await?) })
    }
}
