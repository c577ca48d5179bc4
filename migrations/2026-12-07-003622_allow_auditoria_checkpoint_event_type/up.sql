-- The event type of issue 36, part 3: `auditoria.checkpoint` (the company's log got a new signed
-- checkpoint; its note, origin, size and root). Only a URL that names it in `eventos` takes it
-- (docs/webhooks.md), so a URL may choose it.
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
                    'auditoria.incidente', 'auditoria.checkpoint', 'webhook.teste')) NOT VALID;

-- squawk-ignore ban-drop-constraint
ALTER TABLE webhook_urls DROP CONSTRAINT webhook_urls_eventos_check;
ALTER TABLE webhook_urls
    ADD CONSTRAINT webhook_urls_eventos_check
    CHECK (eventos IS NULL OR (cardinality(eventos) > 0 AND eventos <@ ARRAY[
        'solicitacao.criada', 'solicitacao.ativada', 'solicitacao.recusada',
        'solicitacao.expirada', 'solicitacao.revogada', 'casos-de-uso.sincronizados',
        'casos-de-uso.alterado', 'pgcc.indisponivel', 'pgcc.restabelecido',
        'webhook-url.desativada', 'auditoria.incidente', 'auditoria.checkpoint']::text[])) NOT VALID;
