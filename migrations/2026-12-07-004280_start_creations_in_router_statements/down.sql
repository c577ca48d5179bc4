-- The definition of `write_evidence_through_functions` again (one statement with CTEs).
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
