-- Issue 36/40: `consentimento_iniciar` as plain PL/pgSQL statements, same signature, same
-- effect. On Citus the function runs on the company's worker (scripts/citus/distribute.sql), and
-- its one statement there had a data-modifying CTE (`INSERT ... ON CONFLICT` reading the use case
-- found in another CTE), which Citus does not plan on one shard ("only SELECT, UPDATE, or DELETE
-- common table expressions may be router planned"): each CTE became a subplan whose result the
-- worker shipped to every other node, over connections of its own, committed there in two phases
-- inside the creation's transaction. Every creation's start then touched every node, and a
-- worker held on its way to another (the commit-window test's relays) held the creation, and
-- every creation after it. Here each statement names the company and reads or writes one
-- table, so each is planned on the company's shard and nothing leaves the worker. On one node
-- the same function runs: the use case is read first, then the request is written, as before
-- (the insert's conflict still settles a concurrent start of the same id).
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
DECLARE
    v_caso uuid;
    v_vinculo uuid;
    v_versao bigint;
    v_encontrado boolean;
    v_gravadas bigint := 0;
BEGIN
    IF NOT consentimento_transicao_permitida(NULL, p_status) THEN
        RAISE EXCEPTION 'a consent request is not created %', p_status
            USING ERRCODE = 'check_violation';
    END IF;
    -- the company's live use case of the template
    SELECT c.id, c.vinculo_id, c.versao INTO v_caso, v_vinculo, v_versao
    FROM casos_de_uso c
    WHERE c.empresa_id = p_empresa_id AND c.pgcc_provider_template_id = p_template
      AND c.removido_em IS NULL
    LIMIT 1;
    v_encontrado := FOUND;
    -- none: a retry of a start already stored keeps its use case
    IF NOT v_encontrado THEN
        SELECT s.caso_de_uso_id INTO v_caso
        FROM solicitacoes_consentimento s
        WHERE s.empresa_id = p_empresa_id AND s.id = p_id;
    END IF;
    IF v_caso IS NOT NULL THEN
        INSERT INTO solicitacoes_consentimento AS s (
            id, empresa_id, caso_de_uso_id, caso_de_uso_id_template, cpf_titular, tipo_titular,
            modalidade_acesso, cnpj_anuente, data_expiracao_consentimento,
            data_titular_respondeu_consentimento, prova_coleta, status, hash, sal_hash,
            criado_em, atualizado_em, criacao, criacao_tentativa_em, versao_caso_de_uso)
        VALUES (
            p_id, p_empresa_id, v_caso, p_template, p_cpf, p_tipo_titular, p_modalidade,
            p_cnpj_anuente, p_expiracao, p_respondeu_em, p_prova, p_status, p_hash, p_sal_hash,
            p_criado_em, p_atualizado_em, 'em_andamento', p_tentativa_em,
            COALESCE(v_versao, 1))
        ON CONFLICT (empresa_id, id) DO UPDATE
        SET criacao = EXCLUDED.criacao, criacao_tentativa_em = EXCLUDED.criacao_tentativa_em,
            criacao_nao_encontrada_em = NULL
        WHERE s.criacao <> 'confirmada';
        GET DIAGNOSTICS v_gravadas = ROW_COUNT;
    END IF;
    RETURN QUERY SELECT v_gravadas, v_encontrado, v_vinculo;
END
$$;
