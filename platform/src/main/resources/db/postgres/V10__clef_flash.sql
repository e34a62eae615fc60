-- V10 (issue 17, Clef-flash): the model calls made per UTC day (day_utc is yyyy-mm-dd), so the
-- cap of causal.clef-flash-calls-per-day holds across restarts. A call reserves its slot before it
-- is made. Keep db/sqlite/V10__clef_flash.sql the same.
CREATE TABLE clef_flash_calls (
  day_utc  TEXT     PRIMARY KEY,
  calls    INTEGER  NOT NULL
);
