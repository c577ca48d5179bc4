-- Companies (empresas): the API callers, identified by their API keys.
CREATE TABLE empresas (
    id        uuid        PRIMARY KEY,
    nome      text        NOT NULL,
    -- 14 characters, unmasked (numeric or alphanumeric CNPJ).
    cnpj      text        NOT NULL,
    criado_em timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT empresas_cnpj_key UNIQUE (cnpj)
);
