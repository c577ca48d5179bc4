-- The history and the delivery attempts keyed by `(empresa_id, id)`, as every other tenant table
-- is since 2026-12-02-003008 (issue 23, part 3): catalog changes on the indexes the two previous
-- migrations built concurrently. Nothing points at either table's key.

-- squawk-ignore-file ban-drop-constraint
-- (ban-drop-constraint: each primary key dropped here is replaced in the same statement by one
-- that starts with the company; `id` stays an identity, unique in practice.)
ALTER TABLE solicitacoes_historico DROP CONSTRAINT solicitacoes_historico_pkey,
    ADD CONSTRAINT solicitacoes_historico_pkey
        PRIMARY KEY USING INDEX solicitacoes_historico_empresa_id_id_key;
ALTER TABLE webhook_tentativas DROP CONSTRAINT webhook_tentativas_pkey,
    ADD CONSTRAINT webhook_tentativas_pkey PRIMARY KEY USING INDEX webhook_tentativas_empresa_id_id_key;
