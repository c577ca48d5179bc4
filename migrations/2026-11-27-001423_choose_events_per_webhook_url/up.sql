-- Per-URL control (issue 14): which events a URL receives, and the test event.
--
-- `eventos` NULL: every event of the company's data, including types added later; otherwise
-- only the listed types (never empty). Kept distinct so that a new type reaches only the URLs
-- that take all.
ALTER TABLE webhook_urls ADD COLUMN eventos text[] NULL;
ALTER TABLE webhook_urls
    ADD CONSTRAINT webhook_urls_eventos_check
    CHECK (eventos IS NULL OR (cardinality(eventos) > 0 AND eventos <@ ARRAY[
        'solicitacao.criada', 'solicitacao.ativada', 'solicitacao.recusada',
        'solicitacao.expirada', 'solicitacao.revogada', 'casos-de-uso.sincronizados']::text[]));

-- `webhook.teste`: sent to one URL at the company's request (POST .../testar), logged as any
-- delivery.
ALTER TABLE webhook_eventos DROP CONSTRAINT webhook_eventos_tipo_check;
ALTER TABLE webhook_eventos
    ADD CONSTRAINT webhook_eventos_tipo_check
    CHECK (tipo IN ('solicitacao.criada', 'solicitacao.ativada', 'solicitacao.recusada',
                    'solicitacao.expirada', 'solicitacao.revogada',
                    'casos-de-uso.sincronizados', 'webhook.teste'));
