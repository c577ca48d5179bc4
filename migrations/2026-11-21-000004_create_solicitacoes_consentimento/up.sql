-- Consent requests (solicitações de consentimento) created on the PGCC on behalf of a company.
CREATE TABLE solicitacoes_consentimento (
    id                                   uuid        PRIMARY KEY,
    empresa_id                           uuid        NOT NULL REFERENCES empresas (id),
    caso_de_uso_id                       uuid        NOT NULL REFERENCES casos_de_uso (id),
    caso_de_uso_id_template              text        NOT NULL,
    -- Personal data: the subject's CPF, its 11 digits unmasked.
    cpf_titular                          text        NOT NULL,
    tipo_titular                         text        NOT NULL,
    modalidade_acesso                    text        NOT NULL,
    cnpj_anuente                         text        NULL,
    data_expiracao_consentimento         timestamptz NOT NULL,
    -- The subject's answer: both set for requests created active, both null for pending ones.
    data_titular_respondeu_consentimento timestamptz NULL,
    prova_coleta                         text        NULL,
    status                               text        NOT NULL,
    pgcc_id                              text        NOT NULL,
    criado_em                            timestamptz NOT NULL DEFAULT now(),
    atualizado_em                        timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT solicitacoes_consentimento_cpf_titular_check
        CHECK (cpf_titular ~ '^[0-9]{11}$'),
    CONSTRAINT solicitacoes_consentimento_modalidade_acesso_check
        CHECK (modalidade_acesso IN ('Direto', 'Indireto')),
    CONSTRAINT solicitacoes_consentimento_status_check
        CHECK (status IN ('pendente', 'ativo', 'recusado', 'expirado', 'revogado')),
    CONSTRAINT solicitacoes_consentimento_empresa_pgcc_id_key UNIQUE (empresa_id, pgcc_id)
);

-- A company's requests, newest or oldest first, with a stable tie-break (paged listing).
CREATE INDEX solicitacoes_consentimento_empresa_criado_em_idx
    ON solicitacoes_consentimento (empresa_id, criado_em, id);
