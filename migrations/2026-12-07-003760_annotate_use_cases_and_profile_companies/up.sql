-- Records in the ISO/IEC TS 27560 form (issue 37, part 6; docs/records.md).
--
-- The company's annotation of each of its use cases: the LGPD legal basis (article 7 or 11 and
-- the hypothesis), the personal-data categories (DPV `pd:` terms, a canonical JSON array of
-- strings, like `casos_de_uso_versoes.campos`), the notice's URL and language. Keyed by company
-- first like every tenant table (docs/scaling.md); no foreign key to `casos_de_uso` (its key is
-- `id` alone): the repository writes a row only for a use case of the same company. Written by
-- the runtime role (`PUT /api/casos-de-uso/{id}/anotacoes`): `consent_api_conceder_acesso` grants
-- INSERT, UPDATE and DELETE on every table it does not protect, this one included.
CREATE TABLE casos_de_uso_anotacoes (
    empresa_id          uuid        NOT NULL REFERENCES empresas (id),
    caso_de_uso_id      uuid        NOT NULL,
    base_legal_artigo   bigint      NOT NULL CHECK (base_legal_artigo IN (7, 11)),
    base_legal_hipotese text        NOT NULL,
    categorias_dados    text        NOT NULL,
    url_aviso           text        NOT NULL,
    idioma_aviso        text        NOT NULL,
    atualizado_em       timestamptz NOT NULL,
    PRIMARY KEY (empresa_id, caso_de_uso_id)
);

-- The company as data controller (`consent-api company profile`): written by the owner only.
-- `empresas` is among the tables `consent_api_conceder_acesso` protects (the runtime role reads
-- it and cannot write it), so these columns need no grant of their own. NULL until set.
ALTER TABLE empresas ADD COLUMN controlador_nome text NULL;
ALTER TABLE empresas ADD COLUMN controlador_endereco text NULL;
ALTER TABLE empresas ADD COLUMN controlador_contato_dpo text NULL;
