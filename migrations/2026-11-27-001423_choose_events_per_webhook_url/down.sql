-- Test events (and their deliveries and attempts) go first: the older check refuses them.
DELETE FROM webhook_tentativas t USING webhook_entregas e, webhook_eventos ev
    WHERE t.entrega_id = e.id AND e.evento_id = ev.id AND ev.tipo = 'webhook.teste';
DELETE FROM webhook_entregas e USING webhook_eventos ev
    WHERE e.evento_id = ev.id AND ev.tipo = 'webhook.teste';
DELETE FROM webhook_eventos WHERE tipo = 'webhook.teste';
ALTER TABLE webhook_eventos DROP CONSTRAINT webhook_eventos_tipo_check;
ALTER TABLE webhook_eventos
    ADD CONSTRAINT webhook_eventos_tipo_check
    CHECK (tipo IN ('solicitacao.criada', 'solicitacao.ativada', 'solicitacao.recusada',
                    'solicitacao.expirada', 'solicitacao.revogada',
                    'casos-de-uso.sincronizados'));
ALTER TABLE webhook_urls DROP CONSTRAINT webhook_urls_eventos_check;
ALTER TABLE webhook_urls DROP COLUMN eventos;
