-- Retention (docs/security.md, "Retention"): a worker deletes final webhook deliveries (with
-- their attempts) and events past `retention.webhook_days`, and blanks the personal data of
-- cancelled creations past `retention.cancelled_days`, in bounded batches. The indexes below
-- let each batch find its rows without reading the tables.

-- When a cancelled creation's personal data (CPF, proof of collection, the hash derived from
-- them) was blanked. Only a cancelled creation may be blanked: a confirmed request is a consent
-- and keeps its evidence (enforced here, whatever the application does).
ALTER TABLE solicitacoes_consentimento ADD COLUMN dados_apagados_em timestamptz NULL;
ALTER TABLE solicitacoes_consentimento
    ADD CONSTRAINT solicitacoes_consentimento_dados_apagados_check
    CHECK (dados_apagados_em IS NULL OR criacao = 'cancelada');

-- "Cancelled creations not yet blanked, by their last attempt" (the blanking's batches).
CREATE INDEX solicitacoes_consentimento_canceladas_idx
    ON solicitacoes_consentimento (criacao_tentativa_em)
    WHERE criacao = 'cancelada' AND dados_apagados_em IS NULL;

-- "Idempotency keys naming this request": a cancelled creation still reachable by a retry
-- under its key (which may yet confirm it) is not blanked.
CREATE INDEX chaves_idempotencia_recurso_idx ON chaves_idempotencia (recurso_id);

-- "Final deliveries (entregue, falhou, cancelada) by their last change" (the delivery purge).
CREATE INDEX webhook_entregas_finais_idx
    ON webhook_entregas (atualizado_em)
    WHERE status <> 'pendente';

-- "Events by age" (the event purge; whether deliveries remain is read through the unique key
-- (evento_id, webhook_url_id) of webhook_entregas).
CREATE INDEX webhook_eventos_criado_em_idx ON webhook_eventos (criado_em);
