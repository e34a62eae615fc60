-- V7 (Workflows, DESIGN.md section 3): durable step sequences, such as the verification Workflow
-- of a Candidate and the release Workflow of a promoted generation.
-- An instance is keyed by the id its caller gives (Candidate ID, release ID), so a second start
-- with the same id inserts nothing (ON CONFLICT DO NOTHING); each step done keeps its result, so
-- an instance resumed after a crash skips the steps done and passes their results on.
-- Keep db/sqlite/V7__workflows.sql the same.

-- state: running until every step is done (completed) or a step ran out of tries (failed).
CREATE TABLE workflow_instances (
  instance_id     TEXT    PRIMARY KEY,
  workflow_type   TEXT    NOT NULL,
  state           TEXT    NOT NULL DEFAULT 'running'
                  CHECK (state IN ('running', 'completed', 'failed')),
  input           TEXT    NOT NULL,   -- JSON object
  last_error      TEXT,               -- the last failed try of a step, naming it
  created_at_ms   BIGINT  NOT NULL,
  updated_at_ms   BIGINT  NOT NULL
);
-- The instances to resume at start.
CREATE INDEX ix_workflow_instances_running ON workflow_instances (workflow_type)
  WHERE state = 'running';

-- One row per step done; position is the step's place in its definition.
CREATE TABLE workflow_steps (
  instance_id     TEXT    NOT NULL,
  step_name       TEXT    NOT NULL,
  position        INTEGER NOT NULL,
  result          TEXT    NOT NULL,   -- JSON; a step that returned nothing stores null
  completed_at_ms BIGINT  NOT NULL,
  PRIMARY KEY (instance_id, step_name)
);
