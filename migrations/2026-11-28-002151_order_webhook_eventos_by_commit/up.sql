-- The catch-up feed (GET /api/eventos) in commit order (issue 21, part 5). An event's
-- `criado_em` is when its request was received; a creation confirmed later (a retry after a PGCC
-- 503, the reconciler after an outage) commits after events with later timestamps, so a feed
-- ordered by it skips the late one for good. Each event now records the transaction that wrote it
-- (`transacao`, pg_current_xact_id() as a bigint: 64 bits, epoch included, never wraps) and a
-- position taken at insert (`posicao`). The feed returns only events whose transaction is older
-- than the oldest transaction still running (the snapshot's xmin), ordered by
-- (transacao, posicao, id): every transaction below that watermark has ended, so no event can
-- later appear before a position a client has read. See docs/decisions.md.
--
-- No table rewrite, no backfill: a constant default is stored in the catalog (PostgreSQL 11+)
-- and read for the rows that exist now (1 and 0: before every real transaction, which start at
-- 3); the defaults that draw a value per row are set afterwards and apply to new rows only. The
-- feed's index is built CONCURRENTLY by the next migration.
CREATE SEQUENCE webhook_eventos_posicao_seq AS bigint;

ALTER TABLE webhook_eventos
    ADD COLUMN transacao bigint NOT NULL DEFAULT 1,
    ADD COLUMN posicao bigint NOT NULL DEFAULT 0;

ALTER TABLE webhook_eventos
    ALTER COLUMN transacao SET DEFAULT (pg_current_xact_id()::text)::bigint,
    ALTER COLUMN posicao SET DEFAULT nextval('webhook_eventos_posicao_seq');

ALTER SEQUENCE webhook_eventos_posicao_seq OWNED BY webhook_eventos.posicao;
