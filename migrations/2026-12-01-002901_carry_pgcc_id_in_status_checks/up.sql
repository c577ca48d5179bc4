-- A swept status check reads its lane and nothing else (issue 21, part 1). The sweep used to
-- join each request of its batch to the wide consent row for its PGCC id and status: at 10^7
-- consents those rows are no longer in memory, and the join was most of a check's cost. The
-- PGCC id is written here once (at confirmation; the backfill below for rows scheduled before),
-- the status is the lane's, and a request leaves its lane when it reaches a final status (the
-- transition deletes its schedule row) or when the PGCC answers an odd status for it (its
-- backoff is its own row again). With the covering index of the next migration a batch is one
-- index-only range read.
--
-- A nullable column without a default: catalog only, no rewrite.
ALTER TABLE verificacoes_status ADD COLUMN pgcc_id text;

-- Rows scheduled before this migration get their PGCC id from the `verificacoes_status_pgcc_id`
-- backfill (crates/adapters/postgres/src/backfills.rs), in keyset batches after the migration.
-- Until then the sweep reads the id of such a row from its consent row, as before.
INSERT INTO preenchimentos_retroativos (nome) VALUES ('verificacoes_status_pgcc_id');
