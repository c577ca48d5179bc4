-- The verifiable log (issue 24, docs/auditoria.md): one append-only log per company.
--
-- auditoria_entradas: one row per change of a consent request, written in the change's own
-- transaction. `entrada` is the entry's canonical JSON (RFC 8785 JCS: sorted keys, no
-- whitespace; every value a string or null), `hash_folha` its RFC 9162 leaf hash
-- SHA-256(0x00 || entrada), computed here so no writer can get it wrong. No tree index is given on
-- the hot path (it would make a per-company counter every creation waits on): the position in the
-- company's tree is the entry's rank in (transacao, posicao) order, fixed once its transaction is
-- older than every running one (the watermark the events feed already uses,
-- 2026-11-28-002151_order_webhook_eventos_by_commit). The checkpoint job only signs what lies below
-- that watermark, so no entry can later appear before one a checkpoint covered.
CREATE SEQUENCE IF NOT EXISTS auditoria_entradas_posicao_seq AS bigint;

CREATE TABLE IF NOT EXISTS auditoria_entradas (
    empresa_id uuid NOT NULL REFERENCES empresas (id),
    transacao bigint NOT NULL DEFAULT (pg_current_xact_id()::text)::bigint,
    posicao bigint NOT NULL DEFAULT nextval('auditoria_entradas_posicao_seq'),
    solicitacao_id uuid NOT NULL,
    entrada bytea NOT NULL,
    hash_folha bytea NOT NULL GENERATED ALWAYS AS (sha256('\x00'::bytea || entrada)) STORED,
    PRIMARY KEY (empresa_id, transacao, posicao),
    -- a request's entries in order (proofs, receipts, audit verify): unique because it holds the
    -- key, declared with the table so its index is built while the table is still empty
    UNIQUE (empresa_id, solicitacao_id, transacao, posicao)
);

ALTER SEQUENCE auditoria_entradas_posicao_seq OWNED BY auditoria_entradas.posicao;

-- Every signed checkpoint, kept: `tamanho` entries of the company's log up to (and including) the
-- entry (ate_transacao, ate_posicao), root `raiz`, `nota` the C2SP signed note as served.
CREATE TABLE IF NOT EXISTS auditoria_checkpoints (
    empresa_id uuid NOT NULL REFERENCES empresas (id),
    tamanho bigint NOT NULL CHECK (tamanho > 0),
    raiz bytea NOT NULL CHECK (octet_length(raiz) = 32),
    ate_transacao bigint NOT NULL,
    ate_posicao bigint NOT NULL,
    nota text NOT NULL,
    kid text NOT NULL,
    criado_em timestamptz NOT NULL,
    PRIMARY KEY (empresa_id, tamanho)
);

-- The public keys that ever signed (published by GET /.well-known/jwks.json, retired ones
-- included). `semente` is set only for the key a development server generated for itself
-- (staging and production refuse to start without APP__AUDITORIA__SIGNING_KEY and never store a
-- private key here). A small reference table: no company's data.
CREATE TABLE IF NOT EXISTS auditoria_chaves (
    kid text PRIMARY KEY,
    chave_publica bytea NOT NULL CHECK (octet_length(chave_publica) = 32),
    semente bytea NULL CHECK (semente IS NULL OR octet_length(semente) = 32),
    criada_em timestamptz NOT NULL DEFAULT now()
);

-- The entry's canonical bytes: keys in code-point order, no whitespace, strings escaped by
-- to_json (as JCS does for these values: ids, digits, status words, hex, instants, template ids),
-- instants UTC with six fractional digits as in the consent hash (docs/hash-consulta.md). One
-- function, used by every statement that writes an entry; it writes nothing.
CREATE OR REPLACE FUNCTION auditoria_entrada(
    id uuid, pgcc_id text, cnpj_empresa text, caso_de_uso_id_template text, status_anterior text,
    status text, causa text, motivo text, prova_coleta text, hash text, em timestamptz
) RETURNS bytea
LANGUAGE sql STABLE PARALLEL SAFE
AS $$
SELECT convert_to(
    '{"casoDeUsoIdTemplate":' || to_json(caso_de_uso_id_template)::text
    || ',"causa":' || to_json(causa)::text
    || ',"cnpjEmpresa":' || to_json(cnpj_empresa)::text
    || ',"em":"' || to_char(em AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') || '"'
    || ',"hash":' || to_json(hash)::text
    || ',"id":"' || id::text || '"'
    || ',"motivoSha256":' || coalesce('"' || encode(sha256(convert_to(motivo, 'UTF8')), 'hex') || '"', 'null')
    || ',"pgccId":' || coalesce(to_json(pgcc_id)::text, 'null')
    || ',"provaColetaSha256":' || coalesce('"' || encode(sha256(convert_to(prova_coleta, 'UTF8')), 'hex') || '"', 'null')
    || ',"status":' || to_json(status)::text
    || ',"statusAnterior":' || coalesce(to_json(status_anterior)::text, 'null')
    || '}', 'UTF8')
$$;

-- Append-only: the trigger only raises (it writes nothing and notifies no one).
CREATE OR REPLACE FUNCTION auditoria_recusa_alteracao() RETURNS trigger
LANGUAGE plpgsql
AS $$
BEGIN
    RAISE EXCEPTION 'the audit log is append-only: % on % is refused', TG_OP, TG_TABLE_NAME
        USING ERRCODE = 'insufficient_privilege';
END
$$;

CREATE OR REPLACE TRIGGER auditoria_entradas_somente_insercao
    BEFORE UPDATE OR DELETE ON auditoria_entradas
    FOR EACH ROW EXECUTE FUNCTION auditoria_recusa_alteracao();
CREATE OR REPLACE TRIGGER auditoria_entradas_sem_truncate
    BEFORE TRUNCATE ON auditoria_entradas
    FOR EACH STATEMENT EXECUTE FUNCTION auditoria_recusa_alteracao();
CREATE OR REPLACE TRIGGER auditoria_checkpoints_somente_insercao
    BEFORE UPDATE OR DELETE ON auditoria_checkpoints
    FOR EACH ROW EXECUTE FUNCTION auditoria_recusa_alteracao();
CREATE OR REPLACE TRIGGER auditoria_checkpoints_sem_truncate
    BEFORE TRUNCATE ON auditoria_checkpoints
    FOR EACH STATEMENT EXECUTE FUNCTION auditoria_recusa_alteracao();

-- And the role the service connects with (the one running the migrations, the tables' owner)
-- gives up the privileges itself: an owner can revoke from itself, and only a superuser or a
-- re-GRANT (which the owner may still do: docs/security.md) brings them back.
REVOKE UPDATE, DELETE, TRUNCATE ON auditoria_entradas, auditoria_checkpoints FROM CURRENT_USER;
