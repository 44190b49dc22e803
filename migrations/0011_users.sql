-- The users of a shared server (`kalah-tuner users`): the SHA-256 digest of each user's token
-- (the token itself is shown once and never stored), admin rights (0 or 1) and a quota of
-- core-hours (NULL: none). A run belongs to the user who created it (`created_by`; NULL for
-- runs created with the server's own token or on a server without users).
CREATE TABLE users (
    name TEXT PRIMARY KEY,
    token_sha256 TEXT NOT NULL UNIQUE,
    admin BIGINT NOT NULL DEFAULT 0,
    quota_core_hours DOUBLE PRECISION,
    created_at TEXT NOT NULL
);
ALTER TABLE runs ADD COLUMN created_by TEXT;
-- The claim's fair-share ordering counts each user's running runs.
CREATE INDEX runs_created_by ON runs (created_by, status);
