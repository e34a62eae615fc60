-- V5 (issue 4, router benchmark): the feed's UNIQUE (project_id, event_id) goes. The projector
-- writes a feed row only for an event whose claim (processed_events, the same transaction) is
-- fresh, so the claim already keeps one row per event, as the seed has it; the unique index only
-- cost every feed row a write at a random place (event ids are hashes): bench router about 7%
-- (one stream) and 13% (eight streams) faster without it.
-- SQLite cannot drop a table constraint: the table is rebuilt, feed_seq and its sequence kept.
-- Keep db/sqlite/V5__feed_without_event_key.sql and db/postgres/V5__feed_without_event_key.sql
-- the same in effect.
CREATE TABLE project_events_v5 (
  feed_seq        INTEGER PRIMARY KEY AUTOINCREMENT,
  project_id      TEXT    NOT NULL,
  event_id        TEXT    NOT NULL,
  event_type      TEXT    NOT NULL,
  change_id       TEXT,
  task_id         TEXT,
  stream_index    INTEGER NOT NULL,
  stream_seq      BIGINT,
  occurred_at_ms  BIGINT  NOT NULL,   -- the Event's timestamp
  event           TEXT    NOT NULL,   -- the Event envelope as JSON
  recorded_at_ms  BIGINT  NOT NULL
);
INSERT INTO project_events_v5 (feed_seq, project_id, event_id, event_type, change_id, task_id,
  stream_index, stream_seq, occurred_at_ms, event, recorded_at_ms)
SELECT feed_seq, project_id, event_id, event_type, change_id, task_id, stream_index, stream_seq,
  occurred_at_ms, event, recorded_at_ms FROM project_events;
-- The copy set the new sequence to the largest feed_seq copied; a deleted later row's seq must
-- not come back, so the new table takes the old table's sequence.
DELETE FROM sqlite_sequence WHERE name = 'project_events_v5';
INSERT INTO sqlite_sequence (name, seq)
SELECT 'project_events_v5', seq FROM sqlite_sequence WHERE name = 'project_events';
DROP TABLE project_events;
ALTER TABLE project_events_v5 RENAME TO project_events;
CREATE INDEX ix_project_events_feed ON project_events (project_id, feed_seq);
