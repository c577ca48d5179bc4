-- Use cases (casos de uso): a company's copy of its PGCC use-case templates, kept by the
-- synchronization. A template gone from the PGCC is marked removed (removido_em), not deleted.
CREATE TABLE casos_de_uso (
    id                             uuid        PRIMARY KEY,
    empresa_id                     uuid        NOT NULL REFERENCES empresas (id),
    -- The PGCC link (vínculo) the template belongs to.
    vinculo_id                     uuid        NULL,
    titulo                         text        NOT NULL,
    pgcc_provider_template_id      text        NULL,
    data_inclusao                  timestamptz NOT NULL DEFAULT now(),
    data_ultima_sincronizacao_pgcc timestamptz NULL,
    removido_em                    timestamptz NULL,
    -- The upsert key of the synchronization (ON CONFLICT target).
    CONSTRAINT casos_de_uso_empresa_template_key UNIQUE (empresa_id, pgcc_provider_template_id)
);

-- "A company's use cases not removed, optionally of one link, ordered by title then id":
-- the index is read in order; the optional vinculo_id is a filter on its rows.
CREATE INDEX casos_de_uso_empresa_listagem_idx
    ON casos_de_uso (empresa_id, titulo, id)
    WHERE removido_em IS NULL;
