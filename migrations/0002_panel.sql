-- The benchmark panel of a measured generation (JSON: the leader's score and Elo against the
-- panel, per panel agent and overall, and the champion's generation), for the dashboard's
-- panel curve without reading whole records. NULL for generations the panel did not measure.
ALTER TABLE generations ADD COLUMN panel TEXT;
