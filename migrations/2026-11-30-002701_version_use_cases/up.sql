-- Use-case versions (issue 25, part 1). A synchronization fingerprints the fields of each use case
-- that state its purpose as the PGCC sends them (docs/decisions.md, "Use-case versions"); a new
-- fingerprint makes a new version. `casos_de_uso.versao` is the current one, read by the creation
-- of a consent request in the same statement that stores it; `impressao` its fingerprint (NULL for
-- the rows stored before this migration: the first synchronization after it adopts the
-- fingerprint it computes without a new version when the title and link did not change).
--
-- Constant defaults are stored in the catalog (PostgreSQL 11+): no table rewrite.
ALTER TABLE casos_de_uso ADD COLUMN versao bigint NOT NULL DEFAULT 1;
ALTER TABLE casos_de_uso ADD COLUMN impressao text NULL;

-- Every version of every use case, with the fields it had and when it began (`criada_em`; it
-- ends when the next one begins). `empresa_id` leads the primary key: the table is distributed by
-- company with the others later (docs/scaling.md), so no key spans companies. No foreign key to
-- `casos_de_uso` (its key is `id` alone, which a distributed table cannot reference); the
-- synchronization writes both in one transaction.
CREATE TABLE casos_de_uso_versoes (
    empresa_id      uuid        NOT NULL REFERENCES empresas (id),
    caso_de_uso_id  uuid        NOT NULL,
    versao          bigint      NOT NULL CHECK (versao >= 1),
    impressao       text        NULL,
    titulo          text        NOT NULL,
    vinculo_id      uuid        NULL,
    -- The other purpose fields the PGCC sent, as a canonical JSON object (`{}` today).
    campos          text        NOT NULL DEFAULT '{}',
    criada_em       timestamptz NOT NULL,
    PRIMARY KEY (empresa_id, caso_de_uso_id, versao)
);

-- Every existing use case is at its version 1, as it is stored now (a company's use cases: a
-- small table, read once).
INSERT INTO casos_de_uso_versoes (empresa_id, caso_de_uso_id, versao, titulo, vinculo_id, criada_em)
SELECT empresa_id, id, 1, titulo, vinculo_id, data_inclusao FROM casos_de_uso;
