-- V8 (issue 16, promotion): the ProjectRootActor's record of each Candidate it promoted, so a
-- second decidePromotion of the same Candidate answers already_promoted (seed: "Promotion |
-- Candidate ID + expected generation"). Keep db/postgres/V8__promotions.sql the same.
CREATE TABLE promotions (
  candidate_id     TEXT    PRIMARY KEY,
  project_id       TEXT    NOT NULL,
  change_id        TEXT    NOT NULL,
  generation       BIGINT  NOT NULL,   -- the generation the promotion made
  promoted_at_ms   BIGINT  NOT NULL
);
CREATE INDEX ix_promotions_project ON promotions (project_id, generation);
