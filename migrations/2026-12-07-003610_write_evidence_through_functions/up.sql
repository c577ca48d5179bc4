-- Issue 36, part 1: the service's runtime role owns nothing and cannot write the evidence
-- directly (docs/security.md, "Least privilege"). The consent requests, their history and the
-- audit log's entries are written only through the functions below, defined by the owner
-- (`SECURITY DEFINER`, `search_path` pinned, `EXECUTE` revoked from PUBLIC). Each checks the
-- move against the state machine (`consentimento_transicao_permitida`, held against
-- crates/domain by tests/consent_request_state_machine.rs) and appends the log entry in the same
-- statement, unconditionally: the session switch `consent_api.auditoria` is gone. What the
-- runtime role may do is granted by `consent_api_conceder_acesso`, which `consent-api migrate`
-- (connected as the owner with APP__DATABASE__MIGRATION_URL) calls with the role of
-- APP__DATABASE__URL.

-- The state machine's moves (crates/domain/src/consent_status.rs, `ConsentStatus::apply`): a
-- creation (from nothing) is `pendente` or `ativo`; `pendente` becomes any final status or
-- `ativo`; `ativo` is revoked or expires; nothing leaves a final status.
CREATE OR REPLACE FUNCTION consentimento_transicao_permitida(de text, para text)
RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog
AS $$
    SELECT CASE
        WHEN de IS NULL THEN para IN ('pendente', 'ativo')
        WHEN de = 'pendente' THEN para IN ('ativo', 'recusado', 'expirado', 'revogado')
        WHEN de = 'ativo' THEN para IN ('revogado', 'expirado')
        ELSE false
    END
$$;

-- A creation's first step (`BeginCreation`): the row stored `em_andamento` under the company's
-- live use case for the template, or an unconfirmed row of the company taken over by a new
-- attempt. A creation starts in a status the state machine creates.
CREATE OR REPLACE FUNCTION consentimento_iniciar(
    p_id uuid, p_empresa_id uuid, p_template text, p_cpf text, p_tipo_titular text,
    p_modalidade text, p_cnpj_anuente text, p_expiracao timestamptz, p_respondeu_em timestamptz,
    p_prova text, p_status text, p_hash text, p_sal_hash text, p_criado_em timestamptz,
    p_atualizado_em timestamptz, p_tentativa_em timestamptz)
RETURNS TABLE (gravadas bigint, caso_encontrado boolean, vinculo_id uuid)
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = public, pg_temp
AS $$
#variable_conflict use_column
BEGIN
    IF NOT consentimento_transicao_permitida(NULL, p_status) THEN
        RAISE EXCEPTION 'a consent request is not created %', p_status
            USING ERRCODE = 'check_violation';
    END IF;
    RETURN QUERY
    WITH caso AS (
        SELECT c.id, c.vinculo_id, c.versao FROM casos_de_uso c
        WHERE c.empresa_id = p_empresa_id AND c.pgcc_provider_template_id = p_template
          AND c.removido_em IS NULL
        LIMIT 1
    ), alvo AS (
        SELECT COALESCE(
            (SELECT caso.id FROM caso),
            (SELECT s.caso_de_uso_id FROM solicitacoes_consentimento s
             WHERE s.empresa_id = p_empresa_id AND s.id = p_id)
        ) AS caso_de_uso_id,
        COALESCE((SELECT caso.versao FROM caso), 1) AS versao
    ), gravada AS (
        INSERT INTO solicitacoes_consentimento AS s (
            id, empresa_id, caso_de_uso_id, caso_de_uso_id_template, cpf_titular, tipo_titular,
            modalidade_acesso, cnpj_anuente, data_expiracao_consentimento,
            data_titular_respondeu_consentimento, prova_coleta, status, hash, sal_hash,
            criado_em, atualizado_em, criacao, criacao_tentativa_em, versao_caso_de_uso)
        SELECT
            p_id, p_empresa_id, alvo.caso_de_uso_id, p_template, p_cpf, p_tipo_titular,
            p_modalidade, p_cnpj_anuente, p_expiracao, p_respondeu_em, p_prova, p_status, p_hash,
            p_sal_hash, p_criado_em, p_atualizado_em, 'em_andamento', p_tentativa_em, alvo.versao
        FROM alvo
        WHERE alvo.caso_de_uso_id IS NOT NULL
        ON CONFLICT (empresa_id, id) DO UPDATE
        SET criacao = EXCLUDED.criacao, criacao_tentativa_em = EXCLUDED.criacao_tentativa_em,
            criacao_nao_encontrada_em = NULL
        WHERE s.criacao <> 'confirmada'
        RETURNING 1
    )
    SELECT (SELECT count(*) FROM gravada),
           EXISTS (SELECT 1 FROM caso),
           (SELECT caso.vinculo_id FROM caso);
END
$$;

-- A creation confirmed by the PGCC (`ConfirmCreation`): the row gets its PGCC id and next
-- check, with its history entry (`de` NULL) and its creation entry in the company's audit log,
-- in the log's order at `p_transacao` (the coordinator's transaction on Citus, `settled.rs`;
-- NULL: this transaction's id). Only an unconfirmed row still holding the content the caller
-- built its event from is confirmed; the confirmed row comes back (none when nothing changed).
CREATE OR REPLACE FUNCTION consentimento_confirmar(
    p_id uuid, p_empresa_id uuid, p_pgcc_id text, p_proximo_status_em timestamptz, p_hash text,
    p_status text, p_atualizado_em timestamptz, p_transacao bigint)
RETURNS SETOF solicitacoes_consentimento
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = public, pg_temp
AS $$
DECLARE
    r solicitacoes_consentimento;
BEGIN
    UPDATE solicitacoes_consentimento s
    SET criacao = 'confirmada', pgcc_id = p_pgcc_id, criacao_tentativa_em = NULL,
        criacao_nao_encontrada_em = NULL, proximo_status_em = p_proximo_status_em
    WHERE s.id = p_id AND s.empresa_id = p_empresa_id
      AND s.criacao IN ('em_andamento', 'cancelada')
      AND s.hash = p_hash AND s.status = p_status AND s.atualizado_em = p_atualizado_em
      AND consentimento_transicao_permitida(NULL, s.status)
    RETURNING s.* INTO r;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    INSERT INTO solicitacoes_historico (empresa_id, solicitacao_id, de, para, em, causa)
    VALUES (r.empresa_id, r.id, NULL, r.status, r.criado_em, 'empresa');
    INSERT INTO auditoria_entradas (empresa_id, solicitacao_id, entrada, transacao)
    SELECT r.empresa_id, r.id, auditoria_entrada(
        r.id, r.pgcc_id, e.cnpj, r.caso_de_uso_id_template, NULL, r.status, 'empresa', NULL,
        r.prova_coleta, r.hash, r.criado_em),
        COALESCE(p_transacao, (pg_current_xact_id()::text)::bigint)
    FROM empresas e WHERE e.id = r.empresa_id;
    RETURN NEXT r;
END
$$;

-- A creation the PGCC refused or never made (`cancel`): only the attempt that stamped the row.
CREATE OR REPLACE FUNCTION consentimento_cancelar(
    p_empresa_id uuid, p_id uuid, p_tentativa_em timestamptz)
RETURNS bigint
LANGUAGE sql SECURITY DEFINER
SET search_path = public, pg_temp
AS $$
    WITH canceladas AS (
        UPDATE solicitacoes_consentimento
        SET criacao = 'cancelada'
        WHERE id = p_id AND empresa_id = p_empresa_id AND criacao = 'em_andamento'
          AND criacao_tentativa_em = p_tentativa_em
        RETURNING 1
    )
    SELECT count(*) FROM canceladas
$$;

-- A status change of a confirmed request (a revocation, the PGCC's word), refused unless the
-- state machine allows it: the row moves from `p_de` only, with its history entry and its audit
-- entry. The moved row comes back (none when the row was not in `p_de`).
CREATE OR REPLACE FUNCTION consentimento_transicionar(
    p_empresa_id uuid, p_id uuid, p_de text, p_para text, p_causa text, p_motivo text,
    p_em timestamptz, p_transacao bigint)
RETURNS SETOF solicitacoes_consentimento
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = public, pg_temp
AS $$
DECLARE
    r solicitacoes_consentimento;
BEGIN
    IF p_de IS NULL OR NOT consentimento_transicao_permitida(p_de, p_para) THEN
        RAISE EXCEPTION 'a consent request does not move from % to %', p_de, p_para
            USING ERRCODE = 'check_violation';
    END IF;
    UPDATE solicitacoes_consentimento s
    SET status = p_para, atualizado_em = p_em
    WHERE s.empresa_id = p_empresa_id AND s.id = p_id AND s.criacao = 'confirmada'
      AND s.status = p_de
    RETURNING s.* INTO r;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    INSERT INTO solicitacoes_historico (empresa_id, solicitacao_id, de, para, em, causa, motivo)
    VALUES (r.empresa_id, r.id, p_de, p_para, p_em, p_causa, p_motivo);
    INSERT INTO auditoria_entradas (empresa_id, solicitacao_id, entrada, transacao)
    SELECT r.empresa_id, r.id, auditoria_entrada(
        r.id, r.pgcc_id, e.cnpj, r.caso_de_uso_id_template, p_de, r.status, p_causa, p_motivo,
        r.prova_coleta, r.hash, p_em),
        COALESCE(p_transacao, (pg_current_xact_id()::text)::bigint)
    FROM empresas e WHERE e.id = r.empresa_id;
    RETURN NEXT r;
END
$$;

-- Expiry (`ExpireDue`): up to `p_limit` of the company's requests due at `p_agora` that the
-- state machine lets expire, locked (`SKIP LOCKED`), moved to `expirado` with their history and
-- audit entries and out of the status schedule; the moved rows come back (the table's columns in
-- its order: a later column must be added here).
CREATE OR REPLACE FUNCTION consentimento_expirar(
    p_empresa_id uuid, p_agora timestamptz, p_limite bigint, p_transacao bigint)
RETURNS SETOF solicitacoes_consentimento
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = public, pg_temp
AS $$
BEGIN
    RETURN QUERY
    WITH vencidas AS (
        SELECT s.id, s.status FROM solicitacoes_consentimento s
        WHERE s.empresa_id = p_empresa_id AND s.status IN ('pendente', 'ativo')
          AND s.data_expiracao_consentimento <= p_agora AND s.criacao = 'confirmada'
          AND consentimento_transicao_permitida(s.status, 'expirado')
        ORDER BY s.data_expiracao_consentimento
        LIMIT p_limite
        FOR UPDATE SKIP LOCKED
    ), expiradas AS (
        UPDATE solicitacoes_consentimento s
        SET status = 'expirado', atualizado_em = p_agora
        FROM vencidas v
        WHERE s.empresa_id = p_empresa_id AND s.id = v.id
        RETURNING s.*, v.status AS de
    ), historico AS (
        INSERT INTO solicitacoes_historico (empresa_id, solicitacao_id, de, para, em, causa)
        SELECT x.empresa_id, x.id, x.de, 'expirado', p_agora, 'expiracao' FROM expiradas x
    ), auditada AS (
        INSERT INTO auditoria_entradas (empresa_id, solicitacao_id, entrada, transacao)
        SELECT x.empresa_id, x.id, auditoria_entrada(
            x.id, x.pgcc_id, e.cnpj, x.caso_de_uso_id_template, x.de, x.status, 'expiracao',
            NULL, x.prova_coleta, x.hash, p_agora),
            COALESCE(p_transacao, (pg_current_xact_id()::text)::bigint)
        FROM expiradas x JOIN empresas e ON e.id = x.empresa_id
    ), desagendadas AS (
        DELETE FROM verificacoes_status v USING expiradas x
        WHERE v.empresa_id = p_empresa_id AND v.solicitacao_id = x.id
    )
    SELECT x.id, x.empresa_id, x.caso_de_uso_id, x.caso_de_uso_id_template, x.cpf_titular,
        x.tipo_titular, x.modalidade_acesso, x.cnpj_anuente, x.data_expiracao_consentimento,
        x.data_titular_respondeu_consentimento, x.prova_coleta, x.status, x.pgcc_id,
        x.criado_em, x.atualizado_em, x.hash, x.proximo_status_em, x.criacao,
        x.criacao_tentativa_em, x.criacao_nao_encontrada_em, x.status_desconhecido_desde,
        x.dados_apagados_em, x.sal_hash, x.hash_anterior, x.versao_caso_de_uso,
        x.pgcc_nao_encontrada_em, x.incidente_integridade_em
    FROM expiradas x;
END
$$;

-- Retention (`BlankCancelled`): the company's cancelled creations last attempted before
-- `p_antes` that no idempotency key names, blanked (CPF, proof, hash), each with its audit entry
-- (cause `retencao`, status unchanged). The count of rows blanked.
CREATE OR REPLACE FUNCTION consentimento_apagar_canceladas(
    p_empresa_id uuid, p_antes timestamptz, p_agora timestamptz, p_limite bigint)
RETURNS bigint
LANGUAGE sql SECURITY DEFINER
SET search_path = public, pg_temp
AS $$
    WITH alvo AS MATERIALIZED (
        SELECT c.id
        FROM solicitacoes_consentimento c
        WHERE c.empresa_id = p_empresa_id AND c.criacao = 'cancelada'
          AND c.dados_apagados_em IS NULL AND c.criacao_tentativa_em < p_antes
          AND NOT EXISTS (
              SELECT 1 FROM chaves_idempotencia k
              WHERE k.empresa_id = p_empresa_id AND k.recurso_id = c.id
          )
        ORDER BY c.criacao_tentativa_em
        LIMIT p_limite
        FOR UPDATE SKIP LOCKED
    ), apagadas AS (
        UPDATE solicitacoes_consentimento s
        SET cpf_titular = '00000000000', prova_coleta = NULL, hash = 'apagado:' || s.id::text,
            hash_anterior = NULL, dados_apagados_em = p_agora
        FROM alvo
        WHERE s.empresa_id = p_empresa_id AND s.id = alvo.id AND s.criacao = 'cancelada'
        RETURNING s.*
    ), auditada AS (
        INSERT INTO auditoria_entradas (empresa_id, solicitacao_id, entrada)
        SELECT a.empresa_id, a.id, auditoria_entrada(
            a.id, a.pgcc_id, e.cnpj, a.caso_de_uso_id_template, a.status, a.status, 'retencao',
            NULL, NULL, a.hash, p_agora)
        FROM apagadas a JOIN empresas e ON e.id = a.empresa_id
    )
    SELECT count(*) FROM apagadas
$$;

-- A sandbox company (`empresas.sandbox_de`), created by its real company's key.
CREATE OR REPLACE FUNCTION empresa_criar_sandbox(
    p_id uuid, p_nome text, p_cnpj text, p_criado_em timestamptz, p_real uuid)
RETURNS void
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = public, pg_temp
AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM empresas WHERE id = p_real AND sandbox_de IS NULL) THEN
        RAISE EXCEPTION 'a sandbox belongs to a real company' USING ERRCODE = 'check_violation';
    END IF;
    INSERT INTO empresas (id, nome, cnpj, criado_em, sandbox_de)
    VALUES (p_id, p_nome, p_cnpj, p_criado_em, p_real);
END
$$;

-- The sandbox purge: a sandbox's requests `p_ids` and their history. Refused for a company that
-- is not a sandbox, so no real company's evidence can be deleted this way.
CREATE OR REPLACE FUNCTION sandbox_apagar_solicitacoes(p_empresa_id uuid, p_ids uuid[])
RETURNS bigint
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = public, pg_temp
AS $$
DECLARE
    apagadas bigint;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM empresas WHERE id = p_empresa_id AND sandbox_de IS NOT NULL)
    THEN
        RAISE EXCEPTION 'only a sandbox''s requests are purged' USING ERRCODE = 'check_violation';
    END IF;
    DELETE FROM solicitacoes_historico WHERE empresa_id = p_empresa_id AND solicitacao_id = ANY (p_ids);
    DELETE FROM solicitacoes_consentimento WHERE empresa_id = p_empresa_id AND id = ANY (p_ids);
    GET DIAGNOSTICS apagadas = ROW_COUNT;
    RETURN apagadas;
END
$$;

-- The checkpoint job's writes (`add_checkpoint`): a signed checkpoint kept, never one smaller than
-- the company's largest kept (a log only grows); `false` when that size is kept already.
CREATE OR REPLACE FUNCTION auditoria_guardar_checkpoint(
    p_empresa_id uuid, p_tamanho bigint, p_raiz bytea, p_ate_transacao bigint,
    p_ate_posicao bigint, p_nota text, p_kid text, p_criado_em timestamptz)
RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = public, pg_temp
AS $$
DECLARE
    maior bigint;
BEGIN
    SELECT max(tamanho) INTO maior FROM auditoria_checkpoints WHERE empresa_id = p_empresa_id;
    IF maior IS NOT NULL AND p_tamanho < maior THEN
        RAISE EXCEPTION 'a checkpoint of size % is below the size % already signed', p_tamanho, maior
            USING ERRCODE = 'check_violation';
    END IF;
    INSERT INTO auditoria_checkpoints
        (empresa_id, tamanho, raiz, ate_transacao, ate_posicao, nota, kid, criado_em)
    VALUES (p_empresa_id, p_tamanho, p_raiz, p_ate_transacao, p_ate_posicao, p_nota, p_kid,
        p_criado_em)
    ON CONFLICT DO NOTHING;
    RETURN FOUND;
END
$$;

-- The stored tree's growth (`store_tree`): the leaves from `p_primeiro` on and the nodes they
-- complete, appended only right after the company's last stored leaf (one writer at a time, the
-- size checked under the lock); `false`, writing nothing, when another writer went first.
CREATE OR REPLACE FUNCTION auditoria_guardar_arvore(
    p_empresa_id uuid, p_primeiro bigint, p_indices bigint[], p_transacoes bigint[],
    p_posicoes bigint[], p_niveis smallint[], p_indices_nos bigint[], p_hashes bytea[])
RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = public, pg_temp
AS $$
DECLARE
    proximo bigint;
BEGIN
    PERFORM pg_advisory_xact_lock(hashtext('auditoria_nos'), hashtext(p_empresa_id::text));
    SELECT COALESCE(max(indice) + 1, 0) INTO proximo
    FROM auditoria_folhas WHERE empresa_id = p_empresa_id;
    IF proximo <> p_primeiro THEN
        RETURN false;
    END IF;
    INSERT INTO auditoria_folhas (empresa_id, indice, transacao, posicao)
    SELECT p_empresa_id, * FROM unnest(p_indices, p_transacoes, p_posicoes);
    INSERT INTO auditoria_nos (empresa_id, nivel, indice, hash)
    SELECT p_empresa_id, * FROM unnest(p_niveis, p_indices_nos, p_hashes);
    RETURN true;
END
$$;

REVOKE EXECUTE ON FUNCTION
    consentimento_iniciar(uuid, uuid, text, text, text, text, text, timestamptz, timestamptz,
        text, text, text, text, timestamptz, timestamptz, timestamptz),
    consentimento_confirmar(uuid, uuid, text, timestamptz, text, text, timestamptz, bigint),
    consentimento_cancelar(uuid, uuid, timestamptz),
    consentimento_transicionar(uuid, uuid, text, text, text, text, timestamptz, bigint),
    consentimento_expirar(uuid, timestamptz, bigint, bigint),
    consentimento_apagar_canceladas(uuid, timestamptz, timestamptz, bigint),
    empresa_criar_sandbox(uuid, text, text, timestamptz, uuid),
    sandbox_apagar_solicitacoes(uuid, uuid[]),
    auditoria_guardar_checkpoint(uuid, bigint, bytea, bigint, bigint, text, text, timestamptz),
    auditoria_guardar_arvore(uuid, bigint, bigint[], bigint[], bigint[], smallint[], bigint[],
        bytea[])
FROM PUBLIC;

-- What the runtime role may do, granted by `consent-api migrate` (as the owner) to the role of
-- APP__DATABASE__URL, and taken back first so that a second call leaves exactly this:
-- - read every table;
-- - write the operational tables (keys, idempotency, webhooks, schedules, budgets, sessions,
--   the access log, ...), with their sequences;
-- - the consent requests: no INSERT, UPDATE or DELETE but the bookkeeping columns of the
--   creation's reconciler and the status worker, the PGCC's "not found" included, and the
--   integrity incident it records (never the evidence: status, creation state, content, hash,
--   PGCC id);
-- - the history, the audit entries, the stored tree, the checkpoints, the log's cut-off
--   (`auditoria_inicio`), `empresas` and the signing keys: nothing;
-- - the functions above.
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
        'preenchimentos_retroativos'];
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

REVOKE EXECUTE ON FUNCTION consent_api_conceder_acesso(name) FROM PUBLIC;
