-- SPRT tests started through the API, as every server shows them: `state` is the test as
-- GET /api/sprt-tests/{id} answers it (JSON: agents, report, LLR path), rewritten by the
-- playing process (`owner`) at each heartbeat; status, error, progress and finished_at are
-- columns, so that any server can cancel a test (`cancel_requested`, read by the owner at its
-- next beat) and mark failed one whose owner died.
CREATE TABLE sprt_tests (
    id TEXT PRIMARY KEY,
    created_at TEXT NOT NULL,
    finished_at TEXT,
    status TEXT NOT NULL,
    error TEXT,
    progress DOUBLE PRECISION NOT NULL DEFAULT 0,
    owner TEXT,
    heartbeat_at TEXT,
    cancel_requested BIGINT NOT NULL DEFAULT 0,
    state TEXT NOT NULL
);
CREATE INDEX sprt_tests_created ON sprt_tests (created_at);
