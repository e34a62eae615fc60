-- V21: several cores need PostgreSQL (db/postgres/V21__node_liveness.sql); SQLite is one node and
-- keeps no node rows, so nothing changes here. The file keeps both dialects' versions in step.
SELECT 1;
