-- V20 (audit archive): the key of an archive object is recorded before its put and deleted in the
-- transaction of its claims. A row left behind is a put whose claims never committed (a core
-- killed between the two): the stream's next batch deletes its object, so no Event stays archived
-- twice however its batch comes back. Keep both dialects the same.
CREATE TABLE archive_intents (
  object_key   TEXT PRIMARY KEY,
  stream_index INTEGER NOT NULL
);
CREATE INDEX ix_archive_intents_stream ON archive_intents (stream_index);
