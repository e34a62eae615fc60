-- V11 (queues): how often a redelivered command reached its handler, by queue and sequence on
-- COMMANDS, since the server's delivered count also counts deliveries that never reached core. A
-- row goes when its message is acked or terminated.
-- Keep db/sqlite/V11__handler_runs.sql the same.
CREATE TABLE queue_handler_runs (
  queue          TEXT     NOT NULL,
  stream_seq     BIGINT   NOT NULL,
  runs           INTEGER  NOT NULL,
  updated_at_ms  BIGINT   NOT NULL,
  PRIMARY KEY (queue, stream_seq)
);
