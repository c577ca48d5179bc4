-- Evidence files (issue 37, part 5; docs/evidencias.md): a signed PDF, an image, a recording,
-- stored content-addressed by SHA-256 within the company.
--
-- `evidencias_arquivos`: one file of a company, keyed (empresa_id, sha256): the same bytes
-- uploaded by two companies are two rows and two objects, and every lookup carries the company.
-- `objeto_id` names the stored object (the parts below, or the S3 object): chosen when the upload
-- starts, before the hash is known. `bytes_apagados_em`: when retention deleted the bytes (the
-- row and the log entries stay). Written by the runtime role.
CREATE TABLE evidencias_arquivos (
    empresa_id        uuid        NOT NULL REFERENCES empresas (id),
    sha256            text        NOT NULL CHECK (sha256 ~ '^[0-9a-f]{64}$'),
    tamanho           bigint      NOT NULL CHECK (tamanho >= 0),
    tipo              text        NOT NULL CHECK (char_length(tipo) BETWEEN 1 AND 100),
    armazenamento     text        NOT NULL CHECK (armazenamento IN ('postgres', 's3')),
    objeto_id         uuid        NOT NULL,
    criado_em         timestamptz NOT NULL,
    bytes_apagados_em timestamptz NULL,
    PRIMARY KEY (empresa_id, sha256)
);

-- The bytes in PostgreSQL (the default store): parts of a fixed size in order, so neither an
-- upload nor a download holds a whole file. Parts of an upload that failed, or of a file already
-- there, are deleted by the upload; a crash may leave some with no file row (the retention
-- purge deletes those: docs/evidencias.md). Written by the runtime role.
CREATE TABLE evidencias_partes (
    empresa_id uuid        NOT NULL REFERENCES empresas (id),
    objeto_id  uuid        NOT NULL,
    indice     bigint      NOT NULL CHECK (indice >= 0),
    bytes      bytea       NOT NULL,
    criado_em  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (empresa_id, objeto_id, indice)
);

-- Which files a consent request has: evidence, written only through `evidencia_vincular` (the
-- runtime role has no write on it, like the history and the log).
CREATE TABLE solicitacoes_arquivos (
    empresa_id     uuid        NOT NULL,
    solicitacao_id uuid        NOT NULL,
    sha256         text        NOT NULL,
    vinculado_em   timestamptz NOT NULL,
    PRIMARY KEY (empresa_id, solicitacao_id, sha256),
    FOREIGN KEY (empresa_id, sha256) REFERENCES evidencias_arquivos (empresa_id, sha256)
);

-- retention: a file's links by file
CREATE INDEX solicitacoes_arquivos_por_arquivo ON solicitacoes_arquivos (empresa_id, sha256);

-- Links one of the company's files to one of its confirmed requests and appends the log entry in
-- the same transaction: a non-move (`statusAnterior` = `status`, the request's status now) of
-- cause `arquivo`, with the file's `arquivoSha256`, `arquivoTamanho` and `arquivoTipo` (strings,
-- like every value of an entry; keys still in code-point order: they come before
-- `casoDeUsoIdTemplate`). Answers `vinculado`, `ja_vinculado` (nothing written), `sem_arquivo`
-- (no such file of this company: another company's hash is not found either) or
-- `sem_solicitacao`. The request's row is locked so no status change interleaves.
CREATE OR REPLACE FUNCTION evidencia_vincular(
    p_empresa_id uuid, p_solicitacao_id uuid, p_sha256 text, p_em timestamptz,
    p_transacao bigint)
RETURNS text
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = public, pg_temp
AS $$
DECLARE
    r solicitacoes_consentimento;
    a evidencias_arquivos;
BEGIN
    SELECT * INTO r FROM solicitacoes_consentimento s
    WHERE s.empresa_id = p_empresa_id AND s.id = p_solicitacao_id AND s.criacao = 'confirmada'
    FOR UPDATE;
    IF NOT FOUND THEN
        RETURN 'sem_solicitacao';
    END IF;
    SELECT * INTO a FROM evidencias_arquivos f
    WHERE f.empresa_id = p_empresa_id AND f.sha256 = p_sha256 AND f.bytes_apagados_em IS NULL;
    IF NOT FOUND THEN
        RETURN 'sem_arquivo';
    END IF;
    INSERT INTO solicitacoes_arquivos (empresa_id, solicitacao_id, sha256, vinculado_em)
    VALUES (p_empresa_id, p_solicitacao_id, p_sha256, p_em)
    ON CONFLICT DO NOTHING;
    IF NOT FOUND THEN
        RETURN 'ja_vinculado';
    END IF;
    INSERT INTO auditoria_entradas (empresa_id, solicitacao_id, entrada, transacao)
    SELECT r.empresa_id, r.id,
        convert_to(
            '{"arquivoSha256":' || to_json(a.sha256)::text
            || ',"arquivoTamanho":' || to_json(a.tamanho::text)::text
            || ',"arquivoTipo":' || to_json(a.tipo)::text || ',', 'UTF8')
        || substring(auditoria_entrada(
            r.id, r.pgcc_id, e.cnpj, r.caso_de_uso_id_template, r.status, r.status, 'arquivo',
            NULL, r.prova_coleta, r.hash, p_em) FROM 2),
        COALESCE(p_transacao, (pg_current_xact_id()::text)::bigint)
    FROM empresas e WHERE e.id = r.empresa_id;
    RETURN 'vinculado';
END
$$;

REVOKE EXECUTE ON FUNCTION evidencia_vincular(uuid, uuid, text, timestamptz, bigint) FROM PUBLIC;

-- What the runtime role may do (the whole function, as every migration that changes it redefines
-- it): as before, plus `solicitacoes_arquivos` protected and `evidencia_vincular` granted.
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
        'preenchimentos_retroativos', 'empresas_oidc', 'solicitacoes_arquivos'];
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
            'auditoria_guardar_arvore', 'evidencia_vincular')
    LOOP
        EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO %I', t, papel);
    END LOOP;
END
$$;

REVOKE EXECUTE ON FUNCTION consent_api_conceder_acesso(name) FROM PUBLIC;
