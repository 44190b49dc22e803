-- Batch workers as every server shows them (GET /api/workers): each `kalah-tuner worker`
-- and each `serve` that plays batches registers itself (`name` as in batch_results.worker),
-- then beats with the batch under way (`batch`, JSON, NULL when idle) and marks itself
-- stopped when it ends. Games per second come from batch_results.
CREATE TABLE workers (
    name TEXT PRIMARY KEY,
    host TEXT NOT NULL,
    threads BIGINT NOT NULL,
    started_at TEXT NOT NULL,
    heartbeat_at TEXT NOT NULL,
    stopped_at TEXT,
    batch TEXT
);
CREATE INDEX workers_heartbeat ON workers (heartbeat_at);
