-- The SQL function of `write_evidence_through_functions` again.
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
