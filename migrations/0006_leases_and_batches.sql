-- Run ownership by lease: the process evolving a run (`owner`) writes `heartbeat_at` every
-- second; another process takes the run over only once the heartbeat is stale, so two
-- processes on one database never evaluate one run at once, and a crashed owner's run is
-- resumed by whoever is still alive.
ALTER TABLE runs ADD COLUMN owner TEXT;
ALTER TABLE runs ADD COLUMN heartbeat_at TEXT;

-- Results of game batches played by worker processes (PostgreSQL job queue): the points of
-- `jobs` consecutive jobs from `first_job` of one job list (`part`) of a generation, in job
-- order. Written once; a second, different result for one slice is a determinism error.
-- Results do not depend on who asked for them, so a coordinator that takes a run over reuses
-- the slices its predecessor already had played. They are kept with the run (who played what,
-- in how long) and deleted with it.
CREATE TABLE batch_results (
    run_id TEXT NOT NULL,
    generation BIGINT NOT NULL,
    part BIGINT NOT NULL,
    first_job BIGINT NOT NULL,
    jobs BIGINT NOT NULL,
    points TEXT NOT NULL,
    worker TEXT NOT NULL,
    play_ms BIGINT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (run_id, generation, part, first_job, jobs)
);
