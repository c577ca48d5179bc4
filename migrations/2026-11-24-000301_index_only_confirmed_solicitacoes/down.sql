-- The indexes as the earlier migrations made them.
DROP INDEX solicitacoes_consentimento_empresa_pgcc_id_key;
ALTER TABLE solicitacoes_consentimento
    ADD CONSTRAINT solicitacoes_consentimento_empresa_pgcc_id_key UNIQUE (empresa_id, pgcc_id);

DROP INDEX solicitacoes_consentimento_empresa_criado_em_idx;
CREATE INDEX solicitacoes_consentimento_empresa_criado_em_idx
    ON solicitacoes_consentimento (empresa_id, criado_em, id);

DROP INDEX solicitacoes_consentimento_validas_idx;
CREATE INDEX solicitacoes_consentimento_validas_idx
    ON solicitacoes_consentimento
       (empresa_id, cpf_titular, caso_de_uso_id_template, data_expiracao_consentimento)
    WHERE status = 'ativo';

DROP INDEX solicitacoes_consentimento_expiracao_idx;
CREATE INDEX solicitacoes_consentimento_expiracao_idx
    ON solicitacoes_consentimento (data_expiracao_consentimento)
    WHERE status IN ('pendente', 'ativo');

DROP INDEX solicitacoes_consentimento_status_devido_idx;
CREATE INDEX solicitacoes_consentimento_status_devido_idx
    ON solicitacoes_consentimento (proximo_status_em)
    WHERE status IN ('pendente', 'ativo');
