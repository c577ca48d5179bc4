-- A hash that does not give the CPF away (issue 14). The canonical content of a request's hash
-- gains `sal`, 32 random hex digits of its own: without the salt, a masked CPF (1,000 candidates)
-- and the hash published beside it no longer confirm the CPF in 1,000 tries. The unsalted hash a
-- company may have kept moves to `hash_anterior`, which `GET /api/hash-consulta/{hash}` still
-- finds and no answer shows.
--
-- Only the catalog changes here (issue 21: a live table is never rewritten under an exclusive
-- lock): both columns are added without a table rewrite (a constant default is stored once in
-- the catalog), and the existing rows get their salt and salted hash afterwards, from the
-- backfill `sal_hash` registered below (crates/adapters/postgres/src/backfills.rs), in keyset
-- batches of their own transactions. Until then a row keeps `sal_hash` = '' and its unsalted
-- hash, which HashConsulta finds as before. The service always writes its own salt.
ALTER TABLE solicitacoes_consentimento
    ADD COLUMN sal_hash text NOT NULL DEFAULT '',
    ADD COLUMN hash_anterior text;

-- Checked for every new or updated row at once; the existing rows are checked by a later
-- migration (2026-11-27-001473), which scans without blocking reads or writes.
ALTER TABLE solicitacoes_consentimento
    ADD CONSTRAINT solicitacoes_consentimento_sal_hash_check
    CHECK (sal_hash = '' OR sal_hash ~ '^[0-9a-f]{32}$') NOT VALID;

INSERT INTO preenchimentos_retroativos (nome) VALUES ('sal_hash');
