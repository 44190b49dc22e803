//! The server and its processes, end to end: the HTTP API on SQLite and PostgreSQL, crash
//! safety, two servers on one database, workers on the job queue, and the dashboard in a
//! headless browser. One test binary, so that the shared support code and the async test code
//! compile once and the long browser test overlaps the others instead of running alone.
//!
//! PostgreSQL tests read `KALAH_TUNER_TEST_PG_URL` (`.ci/run` sets it; with `CI=true` they fail
//! rather than skip without it). One module's tests: `cargo test --release --test server
//! dashboard::` (or `api::`, `crash::`, `distributed::`, `shared::`).

mod support;

mod api;
mod crash;
mod dashboard;
mod distributed;
mod ladder;
mod shared;
mod users;
