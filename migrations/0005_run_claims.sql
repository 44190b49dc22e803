-- Each time a worker claims a run the claim number goes up; a worker writes, finishes or
-- fails a run only under the number it claimed it with. A worker still busy with a run that
-- was cancelled and resumed meanwhile (and claimed by another) then writes nothing.
ALTER TABLE runs ADD COLUMN claim BIGINT NOT NULL DEFAULT 0;
