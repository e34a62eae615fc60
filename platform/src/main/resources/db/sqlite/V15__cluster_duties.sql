-- V15 (several cores, DESIGN.md 9): SQLite is one node, so it has no cluster_nodes or
-- cluster_leases (see db/postgres/V15__cluster_duties.sql); its outbox rows get the same epoch
-- column, always 0 when published.
ALTER TABLE outbox ADD COLUMN epoch BIGINT;
