-- The console's sessions (issue 26), kept where every API replica reads them: a browser signed
-- in on one replica is served by any other, with no sticky sessions in the load balancer. A row
-- holds no secret that opens anything by itself: the SHA-256 of the cookie's value (the cookie
-- is the session), the hash of the API key it was opened with (as `api_keys` keeps it: each page
-- authenticates it again, so a revoked key ends its sessions), the session's CSRF token and its
-- last use (the idle timeout, `console.session_minutes`). Not a company's data: no `empresa_id`.
CREATE TABLE console_sessoes (
    id_hash    bytea       PRIMARY KEY,
    chave_hash text        NOT NULL,
    csrf       text        NOT NULL,
    ultimo_uso timestamptz NOT NULL,
    criada_em  timestamptz NOT NULL
);

-- Idle sessions are forgotten in small batches at each sign-in, oldest first.
CREATE INDEX console_sessoes_ultimo_uso_idx ON console_sessoes (ultimo_uso);
-- A key keeps at most a bounded number of sessions (the oldest go at a new sign-in).
CREATE INDEX console_sessoes_chave_idx ON console_sessoes (chave_hash, ultimo_uso);
