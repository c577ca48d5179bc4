-- Back to the sets of 2026-12-07-003622, NOT VALID (a row of the new type would keep the old
-- check from validating).
ALTER TABLE webhook_eventos DROP CONSTRAINT webhook_eventos_tipo_check;
ALTER TABLE webhook_eventos
    ADD CONSTRAINT webhook_eventos_tipo_check
    CHECK (tipo IN ('solicitacao.criada', 'solicitacao.ativada', 'solicitacao.recusada',
                    'solicitacao.expirada', 'solicitacao.revogada',
                    'casos-de-uso.sincronizados', 'casos-de-uso.alterado',
                    'pgcc.indisponivel', 'pgcc.restabelecido', 'webhook-url.desativada',
                    'auditoria.incidente', 'auditoria.checkpoint', 'webhook.teste')) NOT VALID;
ALTER TABLE webhook_urls DROP CONSTRAINT webhook_urls_eventos_check;
ALTER TABLE webhook_urls
    ADD CONSTRAINT webhook_urls_eventos_check
    CHECK (eventos IS NULL OR (cardinality(eventos) > 0 AND eventos <@ ARRAY[
        'solicitacao.criada', 'solicitacao.ativada', 'solicitacao.recusada',
        'solicitacao.expirada', 'solicitacao.revogada', 'casos-de-uso.sincronizados',
        'casos-de-uso.alterado', 'pgcc.indisponivel', 'pgcc.restabelecido',
        'webhook-url.desativada', 'auditoria.incidente', 'auditoria.checkpoint']::text[])) NOT VALID;
DROP TABLE importacao_erros;
DROP TABLE importacao_linhas;
DROP TABLE importacoes;
