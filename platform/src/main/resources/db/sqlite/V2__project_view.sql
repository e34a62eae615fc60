-- V2: the read model of ProjectViewActor (issue 4): one row per project with its last event and
-- counters, and one row per Change, Task, Candidate and Agent with its latest state. Counts by
-- state are read with GROUP BY, so nothing here is derived state that could drift.

CREATE TABLE project_views (
  project_id            TEXT    PRIMARY KEY,
  events_applied        BIGINT  NOT NULL DEFAULT 0,
  canonical_generation  BIGINT,
  last_event_id         TEXT,
  last_event_type       TEXT,
  last_event_at_ms      BIGINT,
  updated_at_ms         BIGINT  NOT NULL
);

-- kind: change, task, candidate or agent.
CREATE TABLE project_view_items (
  project_id     TEXT    NOT NULL,
  kind           TEXT    NOT NULL,
  item_id        TEXT    NOT NULL,
  state          TEXT    NOT NULL,
  change_id      TEXT,
  last_event_id  TEXT    NOT NULL,
  updated_at_ms  BIGINT  NOT NULL,
  PRIMARY KEY (project_id, kind, item_id)
);
CREATE INDEX ix_project_view_items_state ON project_view_items (project_id, kind, state);
