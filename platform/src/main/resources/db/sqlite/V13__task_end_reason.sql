-- V13 (issue 29): tasks.state gains cancelled, for a Task that had not ended when its Change
-- ended; end_reason says why (change_failed, change_cancelled, change_declined, change_not_selected).
-- Keep db/sqlite and db/postgres V13__task_end_reason.sql the same.
ALTER TABLE tasks ADD COLUMN end_reason TEXT;
