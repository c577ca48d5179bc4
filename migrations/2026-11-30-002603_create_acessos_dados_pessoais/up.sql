-- The record of who read personal data (issue 24, part 7): one row per answer that carried a full
-- CPF or a proof of collection (a read with mostrarCpf=true, the subject export, a list or a read
-- whose items carry a proof) and per audit route answered. Written by the request itself, in its
-- own connection, before the answer is sent (docs/security.md, "Access log"). Never a CPF: the
-- requests' ids and their salted consent hashes. `empresa_id` leads the primary key and every
-- index: a later issue distributes tables by company. No trigger writes other tables.
CREATE TABLE acessos_dados_pessoais (
    empresa_id      uuid        NOT NULL REFERENCES empresas (id),
    id              uuid        NOT NULL,
    -- The key that read (no foreign key: keys are never deleted, and a distributed table cannot
    -- reference one keyed by id alone).
    api_key_id      uuid        NOT NULL,
    -- The route's template (`/api/solicitacao-consentimento/{id}`), never the concrete path.
    rota            text        NOT NULL,
    solicitacao_ids uuid[]      NOT NULL DEFAULT '{}',
    -- The salted consent hashes of those requests, in the same order.
    hashes          text[]      NOT NULL DEFAULT '{}',
    em              timestamptz NOT NULL,
    PRIMARY KEY (empresa_id, id)
);

-- GET /api/auditoria/acessos pages a company's record by (em, id); the retention purge finds the
-- companies with old rows (one probe each) and deletes them oldest first along the same index.
CREATE INDEX acessos_dados_pessoais_empresa_em_idx
    ON acessos_dados_pessoais (empresa_id, em, id);
