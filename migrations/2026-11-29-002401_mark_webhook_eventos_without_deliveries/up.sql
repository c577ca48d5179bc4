-- Retention purges that never walk rows they cannot purge (issue 21, parts 2 and 3).
--
-- An event can go once no delivery of it is left. The delivery purge deletes an event in the
-- same transaction as its last delivery; `sem_entregas` marks the events that never had one (no
-- URL of the company took their type when they were written), set by the statement that writes
-- the event. The event purge reads only those, along webhook_eventos_empresa_sem_entregas_idx
-- (next migration), so an event held by a delivery stuck for months is never read by it.
--
-- A constant default is stored in the catalog (PostgreSQL 11+): no table rewrite. The events
-- written before this migration get their mark from the `eventos_sem_entregas` backfill
-- (crates/adapters/postgres/src/backfills.rs), in keyset batches after the migration.
ALTER TABLE webhook_eventos ADD COLUMN sem_entregas boolean NOT NULL DEFAULT false;

INSERT INTO preenchimentos_retroativos (nome) VALUES ('eventos_sem_entregas');
