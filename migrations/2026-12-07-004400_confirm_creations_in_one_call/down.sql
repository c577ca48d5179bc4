DROP FUNCTION IF EXISTS consentimento_confirmar_criacao(uuid, uuid, text, timestamptz, text, text,
    timestamptz, bigint, uuid, text, text, timestamptz, text);
DROP FUNCTION IF EXISTS webhook_url_recebe(text[], text);

-- The definitions of `record_import_provenance` and `write_evidence_through_functions` again.
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
