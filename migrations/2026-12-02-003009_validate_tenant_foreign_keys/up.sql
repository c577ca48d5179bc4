-- Validates the company-carrying foreign keys of the previous migration with SHARE UPDATE
-- EXCLUSIVE locks (and a SHARE ROW EXCLUSIVE on each referenced table): reads and writes go on.
ALTER TABLE solicitacoes_consentimento VALIDATE CONSTRAINT solicitacoes_consentimento_caso_de_uso_fkey;
ALTER TABLE solicitacoes_historico VALIDATE CONSTRAINT solicitacoes_historico_solicitacao_fkey;
ALTER TABLE verificacoes_status VALIDATE CONSTRAINT verificacoes_status_solicitacao_fkey;
ALTER TABLE webhook_entregas VALIDATE CONSTRAINT webhook_entregas_evento_fkey;
ALTER TABLE webhook_entregas VALIDATE CONSTRAINT webhook_entregas_webhook_url_fkey;
ALTER TABLE webhook_tentativas VALIDATE CONSTRAINT webhook_tentativas_entrega_fkey;
