ALTER TABLE webhook_tentativas DROP CONSTRAINT webhook_tentativas_entrega_fkey;
ALTER TABLE webhook_entregas DROP CONSTRAINT webhook_entregas_webhook_url_fkey;
ALTER TABLE webhook_entregas DROP CONSTRAINT webhook_entregas_evento_fkey;
ALTER TABLE verificacoes_status DROP CONSTRAINT verificacoes_status_solicitacao_fkey;
ALTER TABLE solicitacoes_historico DROP CONSTRAINT solicitacoes_historico_solicitacao_fkey;
ALTER TABLE solicitacoes_consentimento DROP CONSTRAINT solicitacoes_consentimento_caso_de_uso_fkey;

ALTER TABLE webhook_entregas DROP CONSTRAINT webhook_entregas_empresa_evento_url_key,
    ADD CONSTRAINT webhook_entregas_evento_url_key UNIQUE (evento_id, webhook_url_id);
ALTER TABLE webhook_entregas DROP CONSTRAINT webhook_entregas_pkey, ADD PRIMARY KEY (id);
ALTER TABLE webhook_eventos DROP CONSTRAINT webhook_eventos_pkey, ADD PRIMARY KEY (id);
ALTER TABLE webhook_urls DROP CONSTRAINT webhook_urls_pkey, ADD PRIMARY KEY (id);
ALTER TABLE solicitacoes_consentimento DROP CONSTRAINT solicitacoes_consentimento_pkey,
    ADD PRIMARY KEY (id);
ALTER TABLE casos_de_uso DROP CONSTRAINT casos_de_uso_pkey, ADD PRIMARY KEY (id);

ALTER TABLE webhook_tentativas ADD CONSTRAINT webhook_tentativas_entrega_id_fkey
    FOREIGN KEY (entrega_id) REFERENCES webhook_entregas (id);
ALTER TABLE webhook_entregas ADD CONSTRAINT webhook_entregas_webhook_url_id_fkey
    FOREIGN KEY (webhook_url_id) REFERENCES webhook_urls (id);
ALTER TABLE webhook_entregas ADD CONSTRAINT webhook_entregas_evento_id_fkey
    FOREIGN KEY (evento_id) REFERENCES webhook_eventos (id);
ALTER TABLE verificacoes_status ADD CONSTRAINT verificacoes_status_solicitacao_id_fkey
    FOREIGN KEY (solicitacao_id) REFERENCES solicitacoes_consentimento (id) ON DELETE CASCADE;
ALTER TABLE solicitacoes_historico ADD CONSTRAINT solicitacoes_historico_solicitacao_id_fkey
    FOREIGN KEY (solicitacao_id) REFERENCES solicitacoes_consentimento (id);
ALTER TABLE solicitacoes_consentimento ADD CONSTRAINT solicitacoes_consentimento_caso_de_uso_id_fkey
    FOREIGN KEY (caso_de_uso_id) REFERENCES casos_de_uso (id);
