-- The processor time a run's work has used, in seconds, measured on the threads that did it:
-- its run worker's game threads, and the batch workers' threads for its games on the queue.
-- A user's quota counts it for work that has ended. NULL for runs from before it was measured,
-- which count by the cost estimate instead.
ALTER TABLE runs ADD COLUMN processor_seconds DOUBLE PRECISION;
-- A game batch's processor time, in milliseconds, measured on its worker's threads (NULL for
-- results from before it was measured): what the batch's run is charged once it uses it.
ALTER TABLE batch_results ADD COLUMN processor_ms BIGINT;
