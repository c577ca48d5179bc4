ALTER TABLE solicitacoes_historico
    ADD CONSTRAINT solicitacoes_historico_empresa_id_not_null CHECK (empresa_id IS NOT NULL) NOT VALID;
ALTER TABLE webhook_tentativas
    ADD CONSTRAINT webhook_tentativas_empresa_id_not_null CHECK (empresa_id IS NOT NULL) NOT VALID;
ALTER TABLE solicitacoes_historico ALTER COLUMN empresa_id DROP NOT NULL;
ALTER TABLE webhook_tentativas ALTER COLUMN empresa_id DROP NOT NULL;
