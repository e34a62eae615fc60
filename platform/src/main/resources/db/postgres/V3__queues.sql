-- V3 (issue 5, queues and the dead-letter path): what an operator's Retry records on a dead letter.
-- The row stays open after a Retry: it closes as succeeded when the re-sent command succeeds.
-- Keep db/sqlite/V3__queues.sql the same.

-- The attempt of the command that was dead-lettered; a Retry sends attempt + 1, and a dead letter
-- of that later attempt (same command_id) updates this row instead of being dropped as a repeat.
ALTER TABLE dead_letters ADD COLUMN attempt INTEGER NOT NULL DEFAULT 1;
-- Who sent the last Retry, when, and with which attempt (NULL: never retried).
ALTER TABLE dead_letters ADD COLUMN retried_by TEXT;
ALTER TABLE dead_letters ADD COLUMN retried_at_ms BIGINT;
ALTER TABLE dead_letters ADD COLUMN retried_attempt INTEGER;
