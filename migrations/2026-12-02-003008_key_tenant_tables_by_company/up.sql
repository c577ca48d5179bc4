-- Every tenant table keyed by its company (issue 23, part 3; docs/scaling.md, "Citus"): the
-- primary keys become `(empresa_id, id)` on the indexes the previous migrations built
-- concurrently, the unique key of a delivery becomes `(empresa_id, evento_id, webhook_url_id)`,
-- and every foreign key between tenant tables carries `empresa_id`, so that on a database
-- distributed by company each of them is checked on one shard. Catalog changes only: the old
-- constraints are dropped with their indexes, the new ones take the built indexes (`USING
-- INDEX`), and the foreign keys are added NOT VALID (new rows are checked at once; the next
-- migration validates the rows before without blocking writes). Each ALTER takes its table's
-- ACCESS EXCLUSIVE lock for a catalog change; the runner's lock_timeout bounds the wait.
--
-- The history and the delivery attempts keep their `id` primary key until their `empresa_id`
-- backfills have completed (previous migration). Their new foreign keys are MATCH SIMPLE: a row
-- not yet backfilled (NULL `empresa_id`) is not checked, every row written now is.

-- squawk-ignore-file ban-drop-constraint
-- (ban-drop-constraint: each constraint dropped here is replaced in this same transaction. The
-- one guarantee given up is that an id is unique across companies: the same id under two
-- companies would now be two rows, and ids are random UUIDs the service generates. Each foreign
-- key comes back stronger: the row it points at must also be of the same company.)

-- The foreign keys that point at the old primary keys go first.
ALTER TABLE solicitacoes_consentimento DROP CONSTRAINT solicitacoes_consentimento_caso_de_uso_id_fkey;
ALTER TABLE solicitacoes_historico DROP CONSTRAINT solicitacoes_historico_solicitacao_id_fkey;
ALTER TABLE verificacoes_status DROP CONSTRAINT verificacoes_status_solicitacao_id_fkey;
ALTER TABLE webhook_entregas DROP CONSTRAINT webhook_entregas_evento_id_fkey;
ALTER TABLE webhook_entregas DROP CONSTRAINT webhook_entregas_webhook_url_id_fkey;
ALTER TABLE webhook_tentativas DROP CONSTRAINT webhook_tentativas_entrega_id_fkey;

ALTER TABLE casos_de_uso DROP CONSTRAINT casos_de_uso_pkey,
    ADD CONSTRAINT casos_de_uso_pkey PRIMARY KEY USING INDEX casos_de_uso_empresa_id_id_key;
ALTER TABLE solicitacoes_consentimento DROP CONSTRAINT solicitacoes_consentimento_pkey,
    ADD CONSTRAINT solicitacoes_consentimento_pkey
        PRIMARY KEY USING INDEX solicitacoes_consentimento_empresa_id_id_key;
ALTER TABLE webhook_urls DROP CONSTRAINT webhook_urls_pkey,
    ADD CONSTRAINT webhook_urls_pkey PRIMARY KEY USING INDEX webhook_urls_empresa_id_id_key;
ALTER TABLE webhook_eventos DROP CONSTRAINT webhook_eventos_pkey,
    ADD CONSTRAINT webhook_eventos_pkey PRIMARY KEY USING INDEX webhook_eventos_empresa_id_id_key;
ALTER TABLE webhook_entregas DROP CONSTRAINT webhook_entregas_pkey,
    ADD CONSTRAINT webhook_entregas_pkey PRIMARY KEY USING INDEX webhook_entregas_empresa_id_id_key;
ALTER TABLE webhook_entregas DROP CONSTRAINT webhook_entregas_evento_url_key,
    ADD CONSTRAINT webhook_entregas_empresa_evento_url_key
        UNIQUE USING INDEX webhook_entregas_empresa_evento_url_key;

ALTER TABLE solicitacoes_consentimento ADD CONSTRAINT solicitacoes_consentimento_caso_de_uso_fkey
    FOREIGN KEY (empresa_id, caso_de_uso_id) REFERENCES casos_de_uso (empresa_id, id) NOT VALID;
ALTER TABLE solicitacoes_historico ADD CONSTRAINT solicitacoes_historico_solicitacao_fkey
    FOREIGN KEY (empresa_id, solicitacao_id)
    REFERENCES solicitacoes_consentimento (empresa_id, id) NOT VALID;
ALTER TABLE verificacoes_status ADD CONSTRAINT verificacoes_status_solicitacao_fkey
    FOREIGN KEY (empresa_id, solicitacao_id)
    REFERENCES solicitacoes_consentimento (empresa_id, id) ON DELETE CASCADE NOT VALID;
ALTER TABLE webhook_entregas ADD CONSTRAINT webhook_entregas_evento_fkey
    FOREIGN KEY (empresa_id, evento_id) REFERENCES webhook_eventos (empresa_id, id) NOT VALID;
ALTER TABLE webhook_entregas ADD CONSTRAINT webhook_entregas_webhook_url_fkey
    FOREIGN KEY (empresa_id, webhook_url_id) REFERENCES webhook_urls (empresa_id, id) NOT VALID;
ALTER TABLE webhook_tentativas ADD CONSTRAINT webhook_tentativas_entrega_fkey
    FOREIGN KEY (empresa_id, entrega_id) REFERENCES webhook_entregas (empresa_id, id) NOT VALID;
