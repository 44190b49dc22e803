-- The ladder: every finished run's champion and the hosted anchors on one Elo scale for each
-- board, rules, pie setting and search depth (`ladders.id` names all four). Players keep their
-- latest fitted rating (any server answers GET /api/ladder from these rows alone); trials are
-- the colour-swapped pairs played between them; ratings keep each player's rating over time.
-- One server schedules the games at a time: the one holding the `ladder_lease` row.
-- Tournaments and SPRT tests gain the user who started them (`created_by`), as runs have.
CREATE TABLE ladders (
    id TEXT PRIMARY KEY,
    pits BIGINT NOT NULL,
    seeds BIGINT NOT NULL,
    rules TEXT NOT NULL,
    pie BIGINT NOT NULL,
    depth BIGINT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE TABLE ladder_players (
    id TEXT PRIMARY KEY,
    ladder TEXT NOT NULL,
    -- `run:ID` for a run's champion, `anchor:SPEC` for a hosted agent: one entry each.
    entry TEXT NOT NULL,
    name TEXT NOT NULL,
    spec TEXT NOT NULL,
    run_id TEXT,
    owner TEXT,
    anchor BIGINT NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    withdrawn_at TEXT,
    elo DOUBLE PRECISION,
    margin DOUBLE PRECISION,
    trials BIGINT NOT NULL DEFAULT 0,
    points DOUBLE PRECISION NOT NULL DEFAULT 0
);
CREATE UNIQUE INDEX ladder_players_entry ON ladder_players (ladder, entry);
CREATE INDEX ladder_players_run ON ladder_players (run_id);
CREATE TABLE ladder_trials (
    id TEXT PRIMARY KEY,
    ladder TEXT NOT NULL,
    a TEXT NOT NULL,
    b TEXT NOT NULL,
    a_score DOUBLE PRECISION NOT NULL,
    played_at TEXT NOT NULL
);
CREATE INDEX ladder_trials_ladder ON ladder_trials (ladder);
CREATE TABLE ladder_ratings (
    ladder TEXT NOT NULL,
    player TEXT NOT NULL,
    at TEXT NOT NULL,
    elo DOUBLE PRECISION NOT NULL,
    margin DOUBLE PRECISION NOT NULL,
    trials BIGINT NOT NULL
);
CREATE INDEX ladder_ratings_ladder ON ladder_ratings (ladder, at);
-- When a run was last claimed: users take turns by it (a run yields its slot to another
-- user's waiting run, and the next claim goes to the user whose run was claimed longest ago).
ALTER TABLE runs ADD COLUMN claimed_at TEXT;
-- Tournaments and SPRT tests belong to the user who started them, as runs do.
ALTER TABLE tournaments ADD COLUMN created_by TEXT;
ALTER TABLE sprt_tests ADD COLUMN created_by TEXT;
CREATE TABLE ladder_lease (
    name TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    expires_at TEXT NOT NULL
);
