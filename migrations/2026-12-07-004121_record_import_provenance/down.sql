-- Back to migration 2026-12-07-003610's functions, then without the column.
DROP FUNCTION IF EXISTS auditoria_entrada_importada(
    uuid, text, text, text, text, text, text, text, text, text, timestamptz, uuid, text, text,
    timestamptz);

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

ALTER TABLE solicitacoes_consentimento DROP COLUMN IF EXISTS origem;
