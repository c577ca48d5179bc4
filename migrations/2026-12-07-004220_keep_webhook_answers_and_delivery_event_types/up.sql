-- Issue 38, part 5 (docs/console.md, "A URL's health"): the operator's delivery log shows what
-- the receiver answered, and filters by event type along an index.
--
-- `webhook_tentativas.corpo_resposta`: the start of the receiver's answer body, at most 2,000
-- characters (`ports::RESPONSE_BODY_KEPT`; the sender reads at most 4 KiB of it). Kept as long as
-- the attempt's delivery: the retention purge deletes the attempts with their delivery. The
-- check is NOT VALID here (no scan under this lock) and validated by the next migration.
--
-- `webhook_entregas.tipo_evento`: the type of the delivery's event, copied when the delivery is
-- written (the events' table holds it, and an index cannot reach across a join), so that the
-- log's event-type filter reads the URL's deliveries of that type only (index of migration
-- 2026-12-07-004223). The deliveries written before it get theirs from the backfill
-- `webhook_entregas_tipo_evento` (crates/adapters/postgres/src/backfills.rs), in keyset batches
-- after the migration.
--
-- Nullable columns without a default: catalogue changes only, no row rewritten.
ALTER TABLE webhook_tentativas ADD COLUMN corpo_resposta text NULL;
ALTER TABLE webhook_tentativas ADD CONSTRAINT webhook_tentativas_corpo_resposta_check
    CHECK (char_length(corpo_resposta) <= 2000) NOT VALID;
ALTER TABLE webhook_entregas ADD COLUMN tipo_evento text NULL;

INSERT INTO preenchimentos_retroativos (nome) VALUES ('webhook_entregas_tipo_evento');
