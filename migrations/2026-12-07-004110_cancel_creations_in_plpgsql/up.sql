-- Issue 40, part 2: `consentimento_cancelar` in PL/pgSQL, same signature, same effect. On Citus
-- the owner's write functions run on the company's worker (scripts/citus/distribute.sql). A SQL
-- function's statement is planned with its arguments as unbound parameters, and Citus cannot
-- plan the cancellation's UPDATE, in a data-modifying CTE, that way on the worker ("could not
-- create distributed plan"); PL/pgSQL plans it with the arguments' values, as it does for the
-- other delegated functions. On one node nothing changes but the language.
CREATE OR REPLACE FUNCTION consentimento_cancelar(
    p_empresa_id uuid, p_id uuid, p_tentativa_em timestamptz)
RETURNS bigint
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = public, pg_temp
AS $$
DECLARE
    canceladas bigint;
BEGIN
    UPDATE solicitacoes_consentimento
    SET criacao = 'cancelada'
    WHERE id = p_id AND empresa_id = p_empresa_id AND criacao = 'em_andamento'
      AND criacao_tentativa_em = p_tentativa_em;
    GET DIAGNOSTICS canceladas = ROW_COUNT;
    RETURN canceladas;
END
$$;
