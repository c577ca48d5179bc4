-- The console's sessions by company (issue 23, part 3): on a database distributed by company a
-- session must live on its company's shard, so the cookie now names the company
-- (`<empresa id>.<random>`) and a session is found by `(empresa_id, id_hash)`. Sessions opened
-- before name no company and cannot be found that way: they end (their users sign in again,
-- which is all a session costs). Nothing else refers to this table, and its rows last at most
-- `console.session_minutes`: it is made again rather than altered in place.
-- (ban-drop-table: the rows dropped are sessions, which end anyway; see above)
-- squawk-ignore ban-drop-table
DROP TABLE console_sessoes;
CREATE TABLE console_sessoes (
    empresa_id uuid        NOT NULL REFERENCES empresas (id) ON DELETE CASCADE,
    id_hash    bytea       NOT NULL,
    chave_hash text        NOT NULL,
    csrf       text        NOT NULL,
    ultimo_uso timestamptz NOT NULL,
    criada_em  timestamptz NOT NULL,
    PRIMARY KEY (empresa_id, id_hash)
);

-- A company's idle sessions are forgotten in small batches at each of its sign-ins, oldest first.
CREATE INDEX console_sessoes_ultimo_uso_idx ON console_sessoes (empresa_id, ultimo_uso);
-- A key keeps at most a bounded number of sessions (the oldest go at a new sign-in).
CREATE INDEX console_sessoes_chave_idx ON console_sessoes (empresa_id, chave_hash, ultimo_uso);
