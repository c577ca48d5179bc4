-- API keys: only the SHA-256 hash (lower-case hex) of a key is stored, never the key itself.
CREATE TABLE api_keys (
    id            uuid        PRIMARY KEY,
    empresa_id    uuid        NOT NULL REFERENCES empresas (id),
    hash          text        NOT NULL,
    -- The first characters of the key, for an operator to recognize it.
    prefixo       text        NOT NULL,
    criado_em     timestamptz NOT NULL DEFAULT now(),
    revogado_em   timestamptz NULL,
    ultimo_uso_em timestamptz NULL,
    -- Also the index of the lookup on every authenticated request.
    CONSTRAINT api_keys_hash_key UNIQUE (hash)
);

-- A company's keys (operator listing, foreign key checks).
CREATE INDEX api_keys_empresa_id_idx ON api_keys (empresa_id);
