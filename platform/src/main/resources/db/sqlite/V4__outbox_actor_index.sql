-- V4 (issue 3, outbox benchmark): the index of an actor's waiting outbox rows goes. Every append
-- and every publish wrote it at one of as many places as there are actors, and it served only the
-- alarm's question "when is this actor next due", which the stream's waiting-rows index answers
-- as well: an actor's rows are all on its project's stream. Measured on bench outbox with acks
-- answered in process: 18,000 commits/s without it, 13,000 with it.
-- Keep db/sqlite/V4__outbox_actor_index.sql and db/postgres/V4__outbox_actor_index.sql the same.
DROP INDEX ix_outbox_actor_waiting;
