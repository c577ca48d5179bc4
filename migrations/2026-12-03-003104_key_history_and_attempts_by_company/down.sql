CREATE UNIQUE INDEX solicitacoes_historico_id_key ON solicitacoes_historico (id);
CREATE UNIQUE INDEX webhook_tentativas_id_key ON webhook_tentativas (id);
ALTER TABLE solicitacoes_historico DROP CONSTRAINT solicitacoes_historico_pkey,
    ADD CONSTRAINT solicitacoes_historico_pkey PRIMARY KEY USING INDEX solicitacoes_historico_id_key;
ALTER TABLE webhook_tentativas DROP CONSTRAINT webhook_tentativas_pkey,
    ADD CONSTRAINT webhook_tentativas_pkey PRIMARY KEY USING INDEX webhook_tentativas_id_key;
CREATE UNIQUE INDEX solicitacoes_historico_empresa_id_id_key ON solicitacoes_historico (empresa_id, id);
CREATE UNIQUE INDEX webhook_tentativas_empresa_id_id_key ON webhook_tentativas (empresa_id, id);
