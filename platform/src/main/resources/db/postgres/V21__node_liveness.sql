-- V21 (several cores): the session-level advisory lock each node holds while its process lives.
-- A node whose key is set and whose lock nobody holds is gone (its process died and the server
-- ended its sessions), so its duties move at once instead of when its leases expire. Null: a node
-- of an older version, live by its heartbeat alone.
-- SQLite is one node and has no such table (db/sqlite/V21__node_liveness.sql changes nothing).
ALTER TABLE cluster_nodes ADD COLUMN liveness_key BIGINT;
