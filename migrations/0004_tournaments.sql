-- Tournaments started through the API, kept after they finish and across restarts. `state`
-- is the tournament as GET /api/tournaments/{id} answers it (JSON); status and error are
-- columns too, so that a tournament a stopped server left running can be marked failed.
CREATE TABLE tournaments (
    id TEXT PRIMARY KEY,
    created_at TEXT NOT NULL,
    status TEXT NOT NULL,
    error TEXT,
    state TEXT NOT NULL
);
CREATE INDEX tournaments_created ON tournaments (created_at);
