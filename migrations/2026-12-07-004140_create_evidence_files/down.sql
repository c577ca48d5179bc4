DROP FUNCTION evidencia_vincular(uuid, uuid, text, timestamptz, bigint);
DROP TABLE solicitacoes_arquivos;
DROP TABLE evidencias_partes;
DROP TABLE evidencias_arquivos;

-- the access function as migration 2026-12-07-003870 left it
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
        'preenchimentos_retroativos', 'empresas_oidc'];
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
