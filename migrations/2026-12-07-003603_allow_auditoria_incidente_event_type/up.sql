-- The event type of issue 36: `auditoria.incidente` (a confirmed request the PGCC does not know:
-- an integrity incident). An event of the company's data: a URL may choose it (`eventos`).
--
-- Added NOT VALID (no scan under the ACCESS EXCLUSIVE lock of the ALTER); the next migration
-- validates. Each check is dropped only to be added back wider in the same transaction.
-- squawk-ignore ban-drop-constraint
ALTER TABLE webhook_eventos DROP CONSTRAINT webhook_eventos_tipo_check;
ALTER TABLE webhook_eventos
    ADD CONSTRAINT webhook_eventos_tipo_check
    CHECK (tipo IN ('solicitacao.criada', 'solicitacao.ativada', 'solicitacao.recusada',
                    'solicitacao.expirada', 'solicitacao.revogada',
                    'casos-de-uso.sincronizados', 'casos-de-uso.alterado',
                    'pgcc.indisponivel', 'pgcc.restabelecido', 'webhook-url.desativada',
                    'auditoria.incidente', 'webhook.teste')) NOT VALID;

-- squawk-ignore ban-drop-constraint
ALTER TABLE webhook_urls DROP CONSTRAINT webhook_urls_eventos_check;
ALTER TABLE webhook_urls
    ADD CONSTRAINT webhook_urls_eventos_check
    CHECK (eventos IS NULL OR (cardinality(eventos) > 0 AND eventos <@ ARRAY[
        'solicitacao.criada', 'solicitacao.ativada', 'solicitacao.recusada',
        'solicitacao.expirada', 'solicitacao.revogada', 'casos-de-uso.sincronizados',
        'casos-de-uso.alterado', 'pgcc.indisponivel', 'pgcc.restabelecido',
        'webhook-url.desativada', 'auditoria.incidente']::text[])) NOT VALID;
