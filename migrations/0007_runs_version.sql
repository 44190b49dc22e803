-- What several servers on one database must agree on lives here, not in their memory.
--
-- `versions`: one counter per kind of shared list, bumped in the same transaction as every
-- write that changes what the list shows. A server caches `GET /api/runs` under the counter
-- it read, so a run another server created or advanced is listed at the next request.
CREATE TABLE versions (
    name TEXT PRIMARY KEY,
    version BIGINT NOT NULL
);
INSERT INTO versions (name, version) VALUES ('runs', 0);
