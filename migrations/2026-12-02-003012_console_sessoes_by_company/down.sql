-- The table of 2026-12-01-002904_create_console_sessoes; sessions end, as going up.
DROP TABLE console_sessoes;
CREATE TABLE console_sessoes (
    id_hash    bytea       PRIMARY KEY,
    chave_hash text        NOT NULL,
    csrf       text        NOT NULL,
    ultimo_uso timestamptz NOT NULL,
    criada_em  timestamptz NOT NULL
);
CREATE INDEX console_sessoes_ultimo_uso_idx ON console_sessoes (ultimo_uso);
CREATE INDEX console_sessoes_chave_idx ON console_sessoes (chave_hash, ultimo_uso);
