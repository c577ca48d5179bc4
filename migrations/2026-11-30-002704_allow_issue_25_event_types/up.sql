-- The event types of issue 25: `casos-de-uso.alterado` (a use case's new version, part 1),
-- `pgcc.indisponivel` and `pgcc.restabelecido` (the PGCC's health, part 3) and
-- `webhook-url.desativada` (one of the company's URLs disabled for failing, part 3). Every one is
-- an event of the company's data: a URL may choose it (`eventos`).
--
-- Added NOT VALID (no scan of the existing rows under the ACCESS EXCLUSIVE lock of the ALTER);
-- the next migration validates them under a lock that lets reads and writes go on. Each check is
-- dropped only to be added back wider in the same transaction: no moment without it
-- (squawk's ban-drop-constraint is silenced for these two lines only).
-- squawk-ignore ban-drop-constraint
ALTER TABLE webhook_eventos DROP CONSTRAINT webhook_eventos_tipo_check;
ALTER TABLE webhook_eventos
    ADD CONSTRAINT webhook_eventos_tipo_check
    CHECK (tipo IN ('solicitacao.criada', 'solicitacao.ativada', 'solicitacao.recusada',
                    'solicitacao.expirada', 'solicitacao.revogada',
                    'casos-de-uso.sincronizados', 'casos-de-uso.alterado',
                    'pgcc.indisponivel', 'pgcc.restabelecido', 'webhook-url.desativada',
                    'webhook.teste')) NOT VALID;

-- squawk-ignore ban-drop-constraint
ALTER TABLE webhook_urls DROP CONSTRAINT webhook_urls_eventos_check;
ALTER TABLE webhook_urls
    ADD CONSTRAINT webhook_urls_eventos_check
    CHECK (eventos IS NULL OR (cardinality(eventos) > 0 AND eventos <@ ARRAY[
        'solicitacao.criada', 'solicitacao.ativada', 'solicitacao.recusada',
        'solicitacao.expirada', 'solicitacao.revogada', 'casos-de-uso.sincronizados',
        'casos-de-uso.alterado', 'pgcc.indisponivel', 'pgcc.restabelecido',
        'webhook-url.desativada']::text[])) NOT VALID;
