-- V14 (project view): the stream sequence of the Event that set each item's state. A redelivered
-- older Event (a nacked batch 30 s later, a killed core's held deliveries 5 minutes later) does not
-- overwrite a newer state; rows from before this migration have none, and the next Event sets it.
-- Keep db/postgres/V14__view_item_stream_seq.sql the same.
ALTER TABLE project_view_items ADD COLUMN stream_seq BIGINT;
