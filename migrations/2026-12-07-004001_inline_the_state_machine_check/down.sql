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
