-- V19 (issue 33, traces): the W3C trace context of the transaction that wrote the row, so the
-- publisher, maybe on another node and much later, sends it as the message's headers. Null when
-- nothing was traced. Keep both dialects the same.
ALTER TABLE outbox ADD COLUMN traceparent TEXT;
ALTER TABLE outbox ADD COLUMN tracestate TEXT;
