-- V17 (issue 29, retention): the time columns the lifecycle's purges read, so each purge batch
-- is a range at the old end of an index. Ended Workflows only: running ones are never purged.
-- Keep db/sqlite and db/postgres V17__lifecycle_retention.sql the same.
CREATE INDEX ix_model_routes_decided ON model_routes (decided_at_ms);
CREATE INDEX ix_workflow_instances_ended ON workflow_instances (updated_at_ms)
  WHERE state IN ('completed', 'failed');
