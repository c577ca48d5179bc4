ALTER TABLE webhook_urls DROP CONSTRAINT webhook_urls_eventos_check;
ALTER TABLE webhook_urls
    ADD CONSTRAINT webhook_urls_eventos_check
    CHECK (eventos IS NULL OR (cardinality(eventos) > 0 AND eventos <@ ARRAY[
        'solicitacao.criada', 'solicitacao.ativada', 'solicitacao.recusada',
        'solicitacao.expirada', 'solicitacao.revogada', 'casos-de-uso.sincronizados']::text[]));
ALTER TABLE webhook_eventos DROP CONSTRAINT webhook_eventos_tipo_check;
ALTER TABLE webhook_eventos
    ADD CONSTRAINT webhook_eventos_tipo_check
    CHECK (tipo IN ('solicitacao.criada', 'solicitacao.ativada', 'solicitacao.recusada',
                    'solicitacao.expirada', 'solicitacao.revogada',
                    'casos-de-uso.sincronizados', 'webhook.teste'));
