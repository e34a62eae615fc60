-- V15 (several cores, DESIGN.md 9): a heartbeat row per node and a lease per duty. Times are on
-- the database's clock (TIMESTAMPTZ, now()), never a node's: they only decide when a duty may be
-- taken over; the epoch, read FOR SHARE inside each duty write, decides whether the write commits.
-- SQLite is one node and has no such tables (db/sqlite/V15__cluster_duties.sql adds the epoch only).
CREATE TABLE cluster_nodes (
  node_id        TEXT        PRIMARY KEY,
  address        TEXT,
  started_at     TIMESTAMPTZ NOT NULL,
  last_heartbeat TIMESTAMPTZ NOT NULL,
  state          TEXT        NOT NULL CHECK (state IN ('live', 'stopped'))
);

CREATE TABLE cluster_leases (
  duty       TEXT        PRIMARY KEY,
  owner_node TEXT,
  epoch      BIGINT      NOT NULL DEFAULT 0,
  expires_at TIMESTAMPTZ NOT NULL DEFAULT now(),
  taken_at   TIMESTAMPTZ
);
INSERT INTO cluster_leases (duty) VALUES
  ('stream-00'), ('stream-01'), ('stream-02'), ('stream-03'),
  ('stream-04'), ('stream-05'), ('stream-06'), ('stream-07'), ('sweep');

-- The epoch of the stream duty under which a row was recorded published (0 on one node), so a
-- checker can tell that no row was published under an epoch older than one already used.
ALTER TABLE outbox ADD COLUMN epoch BIGINT;
