-- V12 (issue 29, retention): the time columns that the purges of the tables growing with every
-- Event read, so that each purge batch is a range at the old end of an index, not a table scan.
-- Rows are written in time order, so each index grows at its right end only.
-- Keep db/sqlite/V12__retention.sql the same.
CREATE INDEX ix_project_events_recorded ON project_events (recorded_at_ms);
CREATE INDEX ix_platform_metrics_recorded ON platform_metrics (recorded_at_ms);
CREATE INDEX ix_k2_batch_failures_last ON k2_batch_failures (last_failed_at_ms);
CREATE INDEX ix_dead_letters_closed ON dead_letters (resolved_at_ms) WHERE status = 'closed';
