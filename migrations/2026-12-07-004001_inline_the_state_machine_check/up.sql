-- Issue 40, part 1: `consentimento_transicao_permitida` was declared with
-- `SET search_path = pg_catalog`, and PostgreSQL never inlines a SQL function that carries a SET
-- clause: every call (two per creation, one per row of a confirmation's UPDATE) went through the
-- SQL-function executor, which parses and plans its SELECT anew each time (measured with
-- pg_stat_statements and track_functions: about 0.19 ms of the database's time a call, a fifth of
-- a creation's). Without the SET clause the planner inlines it into the calling statement, whose
-- plan the owner's functions cache per session. It stays immune to the caller's search_path:
-- every operator is named with its schema (`OPERATOR(pg_catalog.=)`), and it reads nothing.
-- Same signature, same answers (tests/consent_request_state_machine.rs holds them against the
-- domain).
CREATE OR REPLACE FUNCTION consentimento_transicao_permitida(de text, para text)
RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RESET search_path
AS $$
    SELECT CASE
        WHEN de IS NULL THEN
            para OPERATOR(pg_catalog.=) ANY (ARRAY['pendente', 'ativo'])
        WHEN de OPERATOR(pg_catalog.=) 'pendente' THEN
            para OPERATOR(pg_catalog.=) ANY (ARRAY['ativo', 'recusado', 'expirado', 'revogado'])
        WHEN de OPERATOR(pg_catalog.=) 'ativo' THEN
            para OPERATOR(pg_catalog.=) ANY (ARRAY['revogado', 'expirado'])
        ELSE false
    END
$$;
