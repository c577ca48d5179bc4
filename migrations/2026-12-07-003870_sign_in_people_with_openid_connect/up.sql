-- Named users in the console (issue 38, part 1; docs/console.md, "Signing in with the company's
-- identity provider").
--
-- Each company's OpenID Provider: written by the operator's CLI (`consent-api company oidc`, the
-- owner's connection), read by the service. The client secret is encrypted as webhook secrets are
-- (AES-256-GCM with `webhooks.encryption_key`): a dump alone cannot sign in to the IdP. Protected
-- like `empresas`: the runtime role reads it and cannot write it (the function below).
CREATE TABLE empresas_oidc (
    empresa_id            uuid        PRIMARY KEY REFERENCES empresas (id) ON DELETE CASCADE,
    emissor               text        NOT NULL,
    client_id             text        NOT NULL,
    client_secret_cifrado text        NOT NULL,
    -- the id_token's claim holding the person's roles (`dpo`, `operador`, `leitura`)
    claim_papeis          text        NOT NULL,
    atualizado_em         timestamptz NOT NULL
);

-- A sign-in under way at the IdP: kept by the server under the SHA-256 of the opaque `state` sent
-- in the redirect (which names the company, `<empresa id>.<random>`, as session ids do), with the
-- nonce and the PKCE verifier; taken (deleted) once by the redirect back, or forgotten after 10
-- minutes. Any API replica may receive the redirect back. Written by the runtime role.
CREATE TABLE console_oidc_pendentes (
    empresa_id  uuid        NOT NULL REFERENCES empresas (id) ON DELETE CASCADE,
    estado_hash bytea       NOT NULL,
    nonce       text        NOT NULL,
    verificador text        NOT NULL,
    criado_em   timestamptz NOT NULL,
    PRIMARY KEY (empresa_id, estado_hash)
);
-- the stale ones are forgotten in small batches at each sign-in of the company, oldest first
CREATE INDEX console_oidc_pendentes_criado_idx ON console_oidc_pendentes (empresa_id, criado_em);

-- A session opened through the IdP has no API key: the person (`sub`, e-mail), the scopes its
-- roles gave at sign-in, and an id of its own (what the access log names where a key's id would
-- be). Every session gains an absolute end (`APP__CONSOLE__SESSION_MAX_MINUTES`) besides the idle
-- one; the sessions open now end 720 minutes (the default) after they were opened. The table
-- holds sessions only (at most `console.session_minutes` idle), so the UPDATE is small.
-- (ban-drop-not-null: the only clients of this table are this service's sessions code, which
-- this version changes; an old process reading a keyless row finds `NULL` and fails that page)
-- squawk-ignore ban-drop-not-null
ALTER TABLE console_sessoes ALTER COLUMN chave_hash DROP NOT NULL;
ALTER TABLE console_sessoes ADD COLUMN sessao_id uuid NULL;
ALTER TABLE console_sessoes ADD COLUMN pessoa_sub text NULL;
ALTER TABLE console_sessoes ADD COLUMN pessoa_email text NULL;
ALTER TABLE console_sessoes ADD COLUMN escopos text NULL;
ALTER TABLE console_sessoes ADD COLUMN expira_em timestamptz NULL;
UPDATE console_sessoes SET expira_em = criada_em + interval '720 minutes' WHERE expira_em IS NULL;

-- The access log names the person who read, when the read came from a session opened through the
-- IdP (NULL for an API key or a key's session).
ALTER TABLE acessos_dados_pessoais ADD COLUMN pessoa_sub text NULL;
ALTER TABLE acessos_dados_pessoais ADD COLUMN pessoa_email text NULL;

-- `empresas_oidc` joins the tables the runtime role cannot write (otherwise as migration
-- `write_evidence_through_functions` left it; `consent-api migrate` calls it after migrating).
CREATE OR REPLACE FUNCTION consent_api_conceder_acesso(papel name)
RETURNS void
LANGUAGE plpgsql
SET search_path = public, pg_temp
AS $$
DECLARE
    protegidas CONSTANT text[] := ARRAY[
        'solicitacoes_consentimento', 'solicitacoes_historico', 'auditoria_entradas',
        'auditoria_chaves', 'auditoria_folhas', 'auditoria_nos', 'auditoria_checkpoints',
        'empresas', 'auditoria_inicio', '__diesel_schema_migrations',
        'preenchimentos_retroativos', 'empresas_oidc'];
    t text;
BEGIN
    -- the owner never takes its own rights away
    IF papel = current_user OR papel = session_user THEN
        RAISE EXCEPTION 'the runtime role must not be the owner' USING ERRCODE = 'check_violation';
    END IF;
    EXECUTE format('REVOKE ALL ON ALL TABLES IN SCHEMA public FROM %I', papel);
    EXECUTE format('REVOKE ALL ON ALL SEQUENCES IN SCHEMA public FROM %I', papel);
    EXECUTE format('GRANT USAGE ON SCHEMA public TO %I', papel);
    EXECUTE format('GRANT SELECT ON ALL TABLES IN SCHEMA public TO %I', papel);
    FOR t IN
        SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND c.relname <> ALL (protegidas)
    LOOP
        EXECUTE format('GRANT INSERT, UPDATE, DELETE ON %I TO %I', t, papel);
    END LOOP;
    FOR t IN
        SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        LEFT JOIN pg_depend d ON d.objid = c.oid AND d.deptype IN ('a', 'i')
        LEFT JOIN pg_class o ON o.oid = d.refobjid
        WHERE n.nspname = 'public' AND c.relkind = 'S'
          AND (o.relname IS NULL OR o.relname <> ALL (protegidas))
    LOOP
        EXECUTE format('GRANT USAGE, SELECT ON SEQUENCE %I TO %I', t, papel);
    END LOOP;
    EXECUTE format(
        'GRANT UPDATE (criacao_tentativa_em, criacao_nao_encontrada_em, proximo_status_em, '
        'status_desconhecido_desde, pgcc_nao_encontrada_em, incidente_integridade_em) '
        'ON solicitacoes_consentimento TO %I', papel);
    FOR t IN
        SELECT p.oid::regprocedure::text FROM pg_proc p
        JOIN pg_namespace n ON n.oid = p.pronamespace
        WHERE n.nspname = 'public' AND p.proname IN (
            'consentimento_iniciar', 'consentimento_confirmar', 'consentimento_cancelar',
            'consentimento_transicionar', 'consentimento_expirar',
            'consentimento_apagar_canceladas', 'empresa_criar_sandbox',
            'sandbox_apagar_solicitacoes', 'auditoria_guardar_checkpoint',
            'auditoria_guardar_arvore')
    LOOP
        EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO %I', t, papel);
    END LOOP;
END
$$;
