-- V6 (issue 15, the Change lifecycle): what Tasks, Agents and resource shards need beyond V1.
-- Keep db/sqlite/V6__lifecycle.sql the same.

-- A Task's key inside its work graph (the Task id is <changeId>:<key>), and when it last became
-- ready and ended. tasks.attempts is the number of the current attempt (0 before the first).
ALTER TABLE tasks ADD COLUMN task_key TEXT;
-- The Task's place in its work graph as submitted: dispatch admits ready Tasks in this order.
ALTER TABLE tasks ADD COLUMN position INTEGER NOT NULL DEFAULT 0;
ALTER TABLE tasks ADD COLUMN ready_at_ms BIGINT;
ALTER TABLE tasks ADD COLUMN ended_at_ms BIGINT;
-- Tasks an Agent holds (the simulated runtime resumes them after a restart).
CREATE INDEX ix_tasks_held ON tasks (state, project_id) WHERE state IN ('assigned', 'running');

-- Intents: an Agent says which resource keys its Task will touch (intent.declared).
CREATE TABLE intents (
  project_id      TEXT    NOT NULL,
  resource_key    TEXT    NOT NULL,
  task_id         TEXT    NOT NULL,
  change_id       TEXT    NOT NULL,
  agent_id        TEXT    NOT NULL,
  attempt         INTEGER NOT NULL,
  declared_at_ms  BIGINT  NOT NULL,
  PRIMARY KEY (project_id, resource_key, task_id, attempt)
);

-- Claims on resource keys, owned by the shard of the key. state: held, released, expired.
-- A held claim past expires_at_ms is expired by its shard's alarm (claim.expired).
CREATE TABLE claims (
  project_id      TEXT    NOT NULL,
  resource_key    TEXT    NOT NULL,
  task_id         TEXT    NOT NULL,
  attempt         INTEGER NOT NULL,
  change_id       TEXT    NOT NULL,
  agent_id        TEXT    NOT NULL,
  shard           INTEGER NOT NULL,
  state           TEXT    NOT NULL DEFAULT 'held'
                  CHECK (state IN ('held', 'released', 'expired')),
  acquired_at_ms  BIGINT  NOT NULL,
  expires_at_ms   BIGINT  NOT NULL,
  ended_at_ms     BIGINT,
  PRIMARY KEY (project_id, resource_key, task_id, attempt)
);
CREATE INDEX ix_claims_held ON claims (project_id, shard, expires_at_ms) WHERE state = 'held';
CREATE INDEX ix_claims_change ON claims (change_id, state);

-- Changesets an Agent proposed for its Task (changeset.proposed); one per Task attempt.
CREATE TABLE changesets (
  changeset_id    TEXT    PRIMARY KEY,
  change_id       TEXT    NOT NULL,
  task_id         TEXT    NOT NULL,
  project_id      TEXT    NOT NULL,
  agent_id        TEXT    NOT NULL,
  resource_keys   TEXT    NOT NULL DEFAULT '[]',   -- JSON array
  created_at_ms   BIGINT  NOT NULL
);
CREATE INDEX ix_changesets_change ON changesets (change_id);
