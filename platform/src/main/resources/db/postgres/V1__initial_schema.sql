-- V1: first cut of every table that DESIGN.md section 2 and the seed name.
-- Times are BIGINT epoch milliseconds. Later issues add columns and tables in new files.
-- Keep db/sqlite/V1__initial_schema.sql the same table for table.

-- Actors ---------------------------------------------------------------------

-- One persisted alarm per actor. due_at_ms NULL = no alarm set; the row keeps the day's
-- fire count so that AlarmGuard's cap (2,000 per UTC day) survives a delete and re-arm.
CREATE TABLE actor_alarms (
  actor_class  TEXT    NOT NULL,
  actor_id     TEXT    NOT NULL,
  due_at_ms    BIGINT,
  fires_day    BIGINT  NOT NULL DEFAULT 0,   -- UTC epoch day of fires_count
  fires_count  INTEGER NOT NULL DEFAULT 0,
  updated_at_ms BIGINT NOT NULL,
  PRIMARY KEY (actor_class, actor_id)
);
CREATE INDEX ix_actor_alarms_due ON actor_alarms (due_at_ms) WHERE due_at_ms IS NOT NULL;

-- Generic keyed state of an actor (JSON text), for state without a table of its own.
CREATE TABLE actor_state (
  actor_class   TEXT   NOT NULL,
  actor_id      TEXT   NOT NULL,
  state_key     TEXT   NOT NULL,
  state_value   TEXT   NOT NULL,
  version       BIGINT NOT NULL DEFAULT 0,
  updated_at_ms BIGINT NOT NULL,
  PRIMARY KEY (actor_class, actor_id, state_key)
);

-- Transactional outbox of ProjectRoot and ResourceShard actors (seed: "Outbox row states").
CREATE TABLE outbox (
  seq                BIGSERIAL PRIMARY KEY,
  actor_class        TEXT    NOT NULL,
  actor_id           TEXT    NOT NULL,
  project_id         TEXT    NOT NULL,
  event_id           TEXT    NOT NULL UNIQUE,
  event_type         TEXT    NOT NULL,
  stream_index       INTEGER NOT NULL CHECK (stream_index >= 0),
  subject            TEXT    NOT NULL,
  payload            BYTEA   NOT NULL,
  state              TEXT    NOT NULL DEFAULT 'pending'
                     CHECK (state IN ('pending', 'retry_wait', 'published', 'failed')),
  attempts           INTEGER NOT NULL DEFAULT 0,
  next_attempt_at_ms BIGINT  NOT NULL,
  last_error         TEXT,
  stream_seq         BIGINT,            -- PubAck sequence, kept for the lost-tail check
  published_at_ms    BIGINT,
  created_at_ms      BIGINT  NOT NULL
);
-- Every index here costs each commit. The two on waiting rows are partial: a row leaves them when
-- it is published, so they stay as small as the backlog.
-- The publisher reads one stream's waiting rows in outbox order, across its projects ...
CREATE INDEX ix_outbox_stream_waiting ON outbox (stream_index, seq)
  WHERE state IN ('pending', 'retry_wait');
-- ... and an actor's alarm asks for its own next due row.
CREATE INDEX ix_outbox_actor_waiting ON outbox (actor_class, actor_id, seq)
  WHERE state IN ('pending', 'retry_wait');
-- The lost-tail check walks published rows by stream sequence.
CREATE INDEX ix_outbox_stream_seq ON outbox (stream_index, stream_seq) WHERE stream_seq IS NOT NULL;

-- Event router ---------------------------------------------------------------

-- Claims: one row per (consumer, event) applied; kept 14 days.
CREATE TABLE processed_events (
  consumer        TEXT   NOT NULL,
  event_id        TEXT   NOT NULL,
  processed_at_ms BIGINT NOT NULL,
  PRIMARY KEY (consumer, event_id)
);
CREATE INDEX ix_processed_events_at ON processed_events (processed_at_ms);

-- The project feed written by project-view-projector with its claims.
CREATE TABLE project_events (
  feed_seq        BIGSERIAL PRIMARY KEY,
  project_id      TEXT    NOT NULL,
  event_id        TEXT    NOT NULL,
  event_type      TEXT    NOT NULL,
  change_id       TEXT,
  task_id         TEXT,
  stream_index    INTEGER NOT NULL,
  stream_seq      BIGINT,
  occurred_at_ms  BIGINT  NOT NULL,   -- the Event's timestamp
  event           TEXT    NOT NULL,   -- the Event envelope as JSON
  recorded_at_ms  BIGINT  NOT NULL,
  UNIQUE (project_id, event_id)
);
CREATE INDEX ix_project_events_feed ON project_events (project_id, feed_seq);

-- Failed deliveries of one event batch per consumer; the 5th failure dead-letters the batch.
CREATE TABLE k2_batch_failures (
  consumer            TEXT    NOT NULL,
  batch_key           TEXT    NOT NULL,
  stream_index        INTEGER NOT NULL,
  failures            INTEGER NOT NULL DEFAULT 0,
  last_error          TEXT,
  first_failed_at_ms  BIGINT  NOT NULL,
  last_failed_at_ms   BIGINT  NOT NULL,
  PRIMARY KEY (consumer, batch_key)
);

-- Dead letters: poison commands and skipped event batches. kind: 'command' or 'event_batch'.
-- resolution: e.g. succeeded, superseded, dismissed, change_ended, retried.
CREATE TABLE dead_letters (
  id              BIGSERIAL PRIMARY KEY,
  command_id      TEXT    NOT NULL UNIQUE,
  kind            TEXT    NOT NULL,
  command_type    TEXT,
  origin_queue    TEXT,
  command         TEXT    NOT NULL,   -- the Command envelope (or batch description) as JSON
  reason          TEXT    NOT NULL,
  delivery_count  INTEGER NOT NULL DEFAULT 0,
  change_id       TEXT,
  task_id         TEXT,
  project_id      TEXT,
  status          TEXT    NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'closed')),
  resolution      TEXT,
  resolved_by     TEXT,
  resolved_at_ms  BIGINT,
  created_at_ms   BIGINT  NOT NULL
);
CREATE INDEX ix_dead_letters_status ON dead_letters (status, created_at_ms);
CREATE INDEX ix_dead_letters_change ON dead_letters (change_id, status);

-- Data points of the METRICS and EVENT_METRICS bindings.
CREATE TABLE platform_metrics (
  id              BIGSERIAL PRIMARY KEY,
  binding         TEXT    NOT NULL,   -- METRICS or EVENT_METRICS
  name            TEXT    NOT NULL,
  value           DOUBLE PRECISION NOT NULL,
  labels          TEXT,               -- JSON object
  project_id      TEXT,
  event_id        TEXT,
  recorded_at_ms  BIGINT  NOT NULL
);
CREATE INDEX ix_platform_metrics_name ON platform_metrics (name, recorded_at_ms);

-- Product ----------------------------------------------------------------------

-- status: active, archived or deleted.
CREATE TABLE projects (
  project_id            TEXT    PRIMARY KEY,
  tenant_id             TEXT    NOT NULL,
  name                  TEXT    NOT NULL,
  status                TEXT    NOT NULL DEFAULT 'active',
  canonical_generation  BIGINT  NOT NULL DEFAULT 0,
  has_live_app          INTEGER NOT NULL DEFAULT 0,   -- 0 or 1
  created_at_ms         BIGINT  NOT NULL,
  updated_at_ms         BIGINT  NOT NULL,
  archived_at_ms        BIGINT,
  deleted_at_ms         BIGINT
);
CREATE INDEX ix_projects_status ON projects (status);

-- state: open, verifying, awaiting_approval, releasing, completed, failed, cancelled,
-- not_selected, declined.
CREATE TABLE changes (
  change_id            TEXT   PRIMARY KEY,
  project_id           TEXT   NOT NULL REFERENCES projects (project_id),
  client_request_id    TEXT   NOT NULL,
  parent_change_id     TEXT,               -- set on a fork variant
  title                TEXT,
  state                TEXT   NOT NULL DEFAULT 'open',
  reason               TEXT,               -- why it failed or is stuck (e.g. a dead letter)
  base_generation      BIGINT,
  created_at_ms        BIGINT NOT NULL,
  updated_at_ms        BIGINT NOT NULL,
  last_activity_at_ms  BIGINT NOT NULL,    -- for change.settle's "quiet for 3 min to 6 h"
  promoted_at_ms       BIGINT,             -- for release.recover after 45 min
  ended_at_ms          BIGINT,
  UNIQUE (project_id, client_request_id)
);
CREATE INDEX ix_changes_state_activity ON changes (state, last_activity_at_ms);
CREATE INDEX ix_changes_project_state ON changes (project_id, state);

-- state: pending, ready, assigned, running, completed, failed, blocked.
CREATE TABLE tasks (
  task_id          TEXT    PRIMARY KEY,
  change_id        TEXT    NOT NULL REFERENCES changes (change_id),
  project_id       TEXT    NOT NULL,
  title            TEXT,
  state            TEXT    NOT NULL DEFAULT 'pending',
  depends_on       TEXT    NOT NULL DEFAULT '[]',   -- JSON array of task ids
  resource_scopes  TEXT    NOT NULL DEFAULT '[]',   -- JSON array of resource keys
  agent_id         TEXT,
  blocked_limit    TEXT,                            -- why blocked, e.g. dead_letter
  attempts         INTEGER NOT NULL DEFAULT 0,
  last_error       TEXT,
  created_at_ms    BIGINT  NOT NULL,
  updated_at_ms    BIGINT  NOT NULL
);
CREATE INDEX ix_tasks_change_state ON tasks (change_id, state);

-- state: open, verifying, verified, rejected, promoted, stale.
CREATE TABLE candidates (
  candidate_id     TEXT    PRIMARY KEY,
  change_id        TEXT    NOT NULL REFERENCES changes (change_id),
  project_id       TEXT    NOT NULL,
  base_generation  BIGINT  NOT NULL,
  composition_key  TEXT    NOT NULL,
  changeset_ids    TEXT    NOT NULL DEFAULT '[]',   -- JSON array, sorted
  state            TEXT    NOT NULL DEFAULT 'open',
  created_at_ms    BIGINT  NOT NULL,
  updated_at_ms    BIGINT  NOT NULL
);
CREATE INDEX ix_candidates_project_state ON candidates (project_id, state, base_generation);
CREATE INDEX ix_candidates_change ON candidates (change_id);

-- One release per promoted generation with a live app: release_id = rel_<project>_<generation>.
-- state: pending, running, completed, failed.
CREATE TABLE releases (
  release_id       TEXT    PRIMARY KEY,
  project_id       TEXT    NOT NULL,
  generation       BIGINT  NOT NULL,
  change_id        TEXT,
  candidate_id     TEXT,
  state            TEXT    NOT NULL DEFAULT 'pending',
  last_error       TEXT,
  created_at_ms    BIGINT  NOT NULL,
  updated_at_ms    BIGINT  NOT NULL,
  completed_at_ms  BIGINT,
  UNIQUE (project_id, generation)
);

-- The indexer's record per project and generation. state: building, ready, failed.
CREATE TABLE project_indexes (
  project_id     TEXT    NOT NULL,
  generation     BIGINT  NOT NULL,
  state          TEXT    NOT NULL DEFAULT 'building',
  attempts       INTEGER NOT NULL DEFAULT 0,
  last_error     TEXT,
  created_at_ms  BIGINT  NOT NULL,
  updated_at_ms  BIGINT  NOT NULL,
  PRIMARY KEY (project_id, generation)
);
CREATE INDEX ix_project_indexes_state ON project_indexes (state, project_id);
