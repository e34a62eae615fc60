-- V22 (API credentials): one row per credential the operator created through the API or the CLI,
-- owned by the api module. Only the SHA-256 of the token is kept; every request looks its hash
-- up, so a revocation holds on every core sharing the database from its commit on. Keep both
-- dialects the same.
CREATE TABLE credentials (
  credential_id   TEXT PRIMARY KEY,
  token_sha256    TEXT NOT NULL UNIQUE,
  role            TEXT NOT NULL,
  name            TEXT NOT NULL,
  rate_limit      INTEGER,
  created_at_ms   BIGINT NOT NULL,
  last_used_at_ms BIGINT,
  revoked_at_ms   BIGINT
);
