-- V18 (issue 32): Flyway keeps the history in flyway_schema_history now; the runner before it
-- kept it here, read once at open to baseline an older database. Keep both dialects the same.
DROP TABLE IF EXISTS schema_version;
