-- V9 (issue 17, causal routing): what the causal router reads and counts beyond V8.
-- Keep db/postgres/V9__causal_routing.sql the same (PostgreSQL compares resource keys byte-wise).

-- The resource scopes of active Agents (holding an assigned or running Task): the Task's scopes,
-- written when its Agent is admitted, and the keys the Agent declared intents on. Rows go when
-- the Task attempt ends; a row left behind matches nothing, since readers join the held Task.
-- The key leads the index after the project, so overlap is found by key, not by Agent.
CREATE TABLE active_scopes (
  project_id      TEXT    NOT NULL,
  resource_key    TEXT NOT NULL,
  task_id         TEXT    NOT NULL,
  agent_id        TEXT    NOT NULL,
  change_id       TEXT    NOT NULL,
  PRIMARY KEY (project_id, resource_key, task_id, agent_id)
);
CREATE INDEX ix_active_scopes_task ON active_scopes (task_id);
CREATE INDEX ix_active_scopes_change ON active_scopes (change_id);

-- The router's commands per Change and UTC day that count toward the seed's cap of 1,000
-- (change.dispatch, candidate.create, change.settle, agent.wake). Written in the claiming
-- transaction, so a redelivered batch does not count twice.
CREATE TABLE causal_command_counts (
  change_id       TEXT    NOT NULL,
  day_utc         TEXT    NOT NULL,   -- yyyy-mm-dd
  commands        INTEGER NOT NULL,
  PRIMARY KEY (change_id, day_utc)
);

-- The Clef-flash decision about one Agent for one Event, written with its model.routed Event:
-- a redelivered batch reuses it instead of asking the model again.
CREATE TABLE model_routes (
  event_id        TEXT    NOT NULL,
  task_id         TEXT    NOT NULL,
  agent_id        TEXT    NOT NULL,
  change_id       TEXT    NOT NULL,
  decision        TEXT    NOT NULL CHECK (decision IN ('wake', 'skip')),
  probability     DOUBLE PRECISION,
  reason          TEXT    NOT NULL,
  latency_ms      BIGINT  NOT NULL,
  decided_at_ms   BIGINT  NOT NULL,
  PRIMARY KEY (event_id, task_id)
);
