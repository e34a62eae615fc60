-- V5 (issue 4, router benchmark): the feed's UNIQUE (project_id, event_id) goes. The projector
-- writes a feed row only for an event whose claim (processed_events, the same transaction) is
-- fresh, so the claim already keeps one row per event, as the seed has it; the unique index only
-- cost every feed row a write at a random place (event ids are hashes).
-- Keep db/sqlite/V5__feed_without_event_key.sql and this file the same in effect.
ALTER TABLE project_events DROP CONSTRAINT project_events_project_id_event_id_key;
