-- What a user says about a run: free-text notes and tags (a JSON list of strings), edited
-- through PATCH /api/runs/{id} beside its name. Existing runs have none.
ALTER TABLE runs ADD COLUMN notes TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN tags TEXT NOT NULL DEFAULT '[]';
