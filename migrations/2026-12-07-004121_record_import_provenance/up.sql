-- Issue 37, part 3 (docs/imports.md, "Provenance"; docs/auditoria.md, "Imported consents"): an
-- imported consent says it was imported, in its row (`origem`, what the list filters on) and in
-- its creation's log entry (`origem`, `idExterno`, the import's id and the subject's original
-- answer date). Both are written by the owner's `consentimento_confirmar` from the request's
-- import line (`importacao_linhas`, found by the index of the migration before), so the runtime
-- role still writes neither the row nor the log directly (docs/security.md, "Least privilege").
--
-- The log stays verifiable: an entry's bytes are hashed into the tree once written, and nothing
-- here rewrites one. A live creation's entry and every status change's keep exactly the
-- eleven keys of `auditoria_entrada`; only the creation entry of an imported consent has the four
-- keys more, in the same canonical form (JCS: keys in code-point order).

-- Nullable, no default: no table rewrite, no scan (only a brief ACCESS EXCLUSIVE lock, taken
-- within the runner's lock_timeout).
ALTER TABLE solicitacoes_consentimento ADD COLUMN IF NOT EXISTS origem text NULL;

-- The creation entry of an imported consent: `auditoria_entrada`'s keys and, in their code-point
-- places, `dataTitularRespondeuConsentimento` (the subject's original answer, `null` for a
-- pending line), `idExterno`, `importacaoId` and `origem`. It writes nothing.
CREATE OR REPLACE FUNCTION auditoria_entrada_importada(
    id uuid, pgcc_id text, cnpj_empresa text, caso_de_uso_id_template text, status_anterior text,
    status text, causa text, motivo text, prova_coleta text, hash text, em timestamptz,
    importacao_id uuid, id_externo text, origem text, respondeu_em timestamptz
) RETURNS bytea
LANGUAGE sql STABLE PARALLEL SAFE
AS $$
SELECT convert_to(
    '{"casoDeUsoIdTemplate":' || to_json(caso_de_uso_id_template)::text
    || ',"causa":' || to_json(causa)::text
    || ',"cnpjEmpresa":' || to_json(cnpj_empresa)::text
    || ',"dataTitularRespondeuConsentimento":' || coalesce('"' || to_char(respondeu_em AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') || '"', 'null')
    || ',"em":"' || to_char(em AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') || '"'
    || ',"hash":' || to_json(hash)::text
    || ',"id":"' || id::text || '"'
    || ',"idExterno":' || to_json(id_externo)::text
    || ',"importacaoId":"' || importacao_id::text || '"'
    || ',"motivoSha256":' || coalesce('"' || encode(sha256(convert_to(motivo, 'UTF8')), 'hex') || '"', 'null')
    || ',"origem":' || to_json(origem)::text
    || ',"pgccId":' || coalesce(to_json(pgcc_id)::text, 'null')
    || ',"provaColetaSha256":' || coalesce('"' || encode(sha256(convert_to(prova_coleta, 'UTF8')), 'hex') || '"', 'null')
    || ',"status":' || to_json(status)::text
    || ',"statusAnterior":' || coalesce(to_json(status_anterior)::text, 'null')
    || '}', 'UTF8')
$$;

-- As in migration 2026-12-07-003610, plus the request's import line: when there is one, the row
-- gets its `origem` and the creation entry its provenance. One key probe of
-- `importacao_linhas_solicitacao` per confirmation (none found for a live creation).
CREATE OR REPLACE FUNCTION consentimento_confirmar(
    p_id uuid, p_empresa_id uuid, p_pgcc_id text, p_proximo_status_em timestamptz, p_hash text,
    p_status text, p_atualizado_em timestamptz, p_transacao bigint)
RETURNS SETOF solicitacoes_consentimento
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = public, pg_temp
AS $$
DECLARE
    r solicitacoes_consentimento;
    v_importacao uuid;
    v_id_externo text;
    v_origem text;
BEGIN
    SELECT l.importacao_id, l.id_externo, l.origem INTO v_importacao, v_id_externo, v_origem
    FROM importacao_linhas l
    WHERE l.empresa_id = p_empresa_id AND l.solicitacao_id = p_id
    LIMIT 1;
    UPDATE solicitacoes_consentimento s
    SET criacao = 'confirmada', pgcc_id = p_pgcc_id, criacao_tentativa_em = NULL,
        criacao_nao_encontrada_em = NULL, proximo_status_em = p_proximo_status_em,
        origem = v_origem
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
    SELECT r.empresa_id, r.id,
        CASE WHEN v_importacao IS NULL THEN auditoria_entrada(
            r.id, r.pgcc_id, e.cnpj, r.caso_de_uso_id_template, NULL, r.status, 'empresa', NULL,
            r.prova_coleta, r.hash, r.criado_em)
        ELSE auditoria_entrada_importada(
            r.id, r.pgcc_id, e.cnpj, r.caso_de_uso_id_template, NULL, r.status, 'empresa', NULL,
            r.prova_coleta, r.hash, r.criado_em, v_importacao, v_id_externo, v_origem,
            r.data_titular_respondeu_consentimento)
        END,
        COALESCE(p_transacao, (pg_current_xact_id()::text)::bigint)
    FROM empresas e WHERE e.id = r.empresa_id;
    RETURN NEXT r;
END
$$;

-- As in migration 2026-12-07-003610, its explicit column list ending with the new `origem` (a
-- row of the table's type must have every column, in order).
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
        x.pgcc_nao_encontrada_em, x.incidente_integridade_em, x.origem
    FROM expiradas x;
END
$$;
