-- One portable schema for SQLite and PostgreSQL (read through sqlx's Any driver): ids, times
-- and JSON are TEXT, counters BIGINT, fitness DOUBLE PRECISION (REAL affinity in SQLite).
-- Times are RFC 3339 UTC with milliseconds, fixed width, so they sort as text.

CREATE TABLE runs (
    id TEXT PRIMARY KEY,
    name TEXT,
    status TEXT NOT NULL,
    preset TEXT,
    config TEXT NOT NULL,
    features TEXT NOT NULL,
    generations_total BIGINT NOT NULL,
    generations_done BIGINT NOT NULL DEFAULT 0,
    best_fitness DOUBLE PRECISION,
    best_weights TEXT,
    created_at TEXT NOT NULL,
    started_at TEXT,
    finished_at TEXT,
    error TEXT,
    stop_reason TEXT
);

CREATE INDEX runs_status_created ON runs (status, created_at);
CREATE INDEX runs_created ON runs (created_at);

-- One row per evaluated generation; the primary key makes "every generation exactly once" a
-- property of the database, not only of the worker.
CREATE TABLE generations (
    run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    generation BIGINT NOT NULL,
    best DOUBLE PRECISION NOT NULL,
    mean DOUBLE PRECISION NOT NULL,
    min DOUBLE PRECISION NOT NULL,
    std DOUBLE PRECISION NOT NULL,
    diversity DOUBLE PRECISION NOT NULL,
    best_so_far DOUBLE PRECISION NOT NULL,
    best_weights TEXT NOT NULL,
    games_played BIGINT NOT NULL,
    wall_ms BIGINT NOT NULL,
    record TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (run_id, generation)
);
