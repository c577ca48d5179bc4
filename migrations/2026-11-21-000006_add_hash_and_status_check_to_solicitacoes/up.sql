-- Consent requests: the content hash (HashConsulta), when the status poller checks each request
-- next, and the indexes of the workers and of the HashConsulta lookups.

-- Lower-case hex SHA-256 of the request's canonical content, computed once at creation by the
-- application. No row exists in production yet; any row created before this migration gets a
-- placeholder unique per row ('legado:' and its id), which is not a hex SHA-256, so no lookup
-- by a real hash ever matches it and the unique key below holds.
ALTER TABLE solicitacoes_consentimento ADD COLUMN hash text NULL;
UPDATE solicitacoes_consentimento SET hash = 'legado:' || id::text;
ALTER TABLE solicitacoes_consentimento ALTER COLUMN hash SET NOT NULL;
ALTER TABLE solicitacoes_consentimento
    ADD CONSTRAINT solicitacoes_consentimento_empresa_hash_key UNIQUE (empresa_id, hash);

-- When the status poller may check the request with the PGCC next (claim_for_status_check
-- pushes it forward as it claims). A new request is due at once.
ALTER TABLE solicitacoes_consentimento
    ADD COLUMN proximo_status_em timestamptz NOT NULL DEFAULT now();

-- "Non-terminal requests due for a status check, oldest due first" (the poller's claim).
CREATE INDEX solicitacoes_consentimento_status_devido_idx
    ON solicitacoes_consentimento (proximo_status_em)
    WHERE status IN ('pendente', 'ativo');

-- "Non-terminal requests whose expiry passed, soonest expiry first" (the expiry worker).
CREATE INDEX solicitacoes_consentimento_expiracao_idx
    ON solicitacoes_consentimento (data_expiracao_consentimento)
    WHERE status IN ('pendente', 'ativo');

-- HashConsulta: "the company's active request for this subject and template, expiring last".
-- The expiry is the last column so the lookup reads the newest expiry first and stops.
CREATE INDEX solicitacoes_consentimento_validas_idx
    ON solicitacoes_consentimento
       (empresa_id, cpf_titular, caso_de_uso_id_template, data_expiracao_consentimento)
    WHERE status = 'ativo';
