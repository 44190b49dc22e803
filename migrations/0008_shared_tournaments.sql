-- Tournaments as any server shows them while they play: games played so far (`progress`,
-- 0 to 1), which process plays them (`owner`, with a heartbeat, so that a dead owner's
-- tournament can be marked failed), and a cancel any server may ask for, which the owner
-- reads between games.
ALTER TABLE tournaments ADD COLUMN progress DOUBLE PRECISION NOT NULL DEFAULT 0;
ALTER TABLE tournaments ADD COLUMN owner TEXT;
ALTER TABLE tournaments ADD COLUMN heartbeat_at TEXT;
ALTER TABLE tournaments ADD COLUMN cancel_requested BIGINT NOT NULL DEFAULT 0;
