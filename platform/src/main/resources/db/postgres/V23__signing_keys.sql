-- V23 (signing keys): the HMAC keys core signs with, kept in the database so that every core of
-- several signs and checks alike without asking another. purpose 'task-token' keys sign the task
-- tokens of Agents (the newest signs, older ones still check until expires_at_ms); purpose
-- 'webhook' keys are the whsec_ secrets webhooks are signed with (each unexpired one signs, so a
-- rotation has two). expires_at_ms is null while a key is current. Keep both dialects the same.
CREATE TABLE signing_keys (
  key_id         TEXT    PRIMARY KEY,
  purpose        TEXT    NOT NULL,
  secret         TEXT    NOT NULL,
  created_at_ms  BIGINT  NOT NULL,
  expires_at_ms  BIGINT
);
CREATE INDEX ix_signing_keys_purpose ON signing_keys (purpose, created_at_ms);
