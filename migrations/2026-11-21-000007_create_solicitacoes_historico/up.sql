-- The history of each consent request: every status change with its cause. Creation is the
-- first entry (de NULL). Rows are only ever inserted; the id orders entries written at the same
-- instant (insertion order).
CREATE TABLE solicitacoes_historico (
    id             bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    solicitacao_id uuid        NOT NULL REFERENCES solicitacoes_consentimento (id),
    de             text        NULL,
    para           text        NOT NULL,
    em             timestamptz NOT NULL,
    causa          text        NOT NULL,
    CONSTRAINT solicitacoes_historico_de_check
        CHECK (de IN ('pendente', 'ativo', 'recusado', 'expirado', 'revogado')),
    CONSTRAINT solicitacoes_historico_para_check
        CHECK (para IN ('pendente', 'ativo', 'recusado', 'expirado', 'revogado')),
    CONSTRAINT solicitacoes_historico_causa_check
        CHECK (causa IN ('pgcc', 'empresa', 'expiracao'))
);

-- A request's history in order (and the foreign key's checks).
CREATE INDEX solicitacoes_historico_solicitacao_em_idx
    ON solicitacoes_historico (solicitacao_id, em, id);

-- Requests stored before this migration: their creation as the first entry (until now no status
-- ever changed after creation, so the stored status is the one they were created with).
INSERT INTO solicitacoes_historico (solicitacao_id, de, para, em, causa)
SELECT id, NULL, status, criado_em, 'empresa'
FROM solicitacoes_consentimento
ORDER BY criado_em, id;
