-- V24 (project view): the outbox seq of the Event that set each item's state, the writer's commit
-- order. A stream sequence is not that order once a lost tail sent an older Event again behind a
-- newer one, or gave a newer one a sequence the view had stored; items compare outbox seqs when
-- both sides have one, else stream sequences as before.
-- Keep db/postgres/V24__view_item_outbox_seq.sql the same.
ALTER TABLE project_view_items ADD COLUMN outbox_seq BIGINT;
