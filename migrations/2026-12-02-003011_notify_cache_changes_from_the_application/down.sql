-- The triggers of 2026-11-24-000401_notify_cache_changes and 2026-11-25-000501_notify_api_key_issued, as
-- they were.
CREATE FUNCTION notificar_cache_da_empresa() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        PERFORM pg_notify('consent_api_cache', OLD.empresa_id::text);
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        PERFORM pg_notify('consent_api_cache', NEW.empresa_id::text);
    END IF;
    RETURN NULL;
END
$$;

CREATE FUNCTION notificar_cache_da_propria_empresa() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        PERFORM pg_notify('consent_api_cache', OLD.id::text);
    END IF;
    IF TG_OP = 'UPDATE' THEN
        PERFORM pg_notify('consent_api_cache', NEW.id::text);
    END IF;
    RETURN NULL;
END
$$;

CREATE FUNCTION notificar_cache_inteiro() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('consent_api_cache', '*');
    RETURN NULL;
END
$$;

-- Any change of the listed use cases.
CREATE TRIGGER casos_de_uso_notificar_cache
    AFTER INSERT OR UPDATE OR DELETE ON casos_de_uso
    FOR EACH ROW EXECUTE FUNCTION notificar_cache_da_empresa();
CREATE TRIGGER casos_de_uso_notificar_cache_truncate
    AFTER TRUNCATE ON casos_de_uso
    FOR EACH STATEMENT EXECUTE FUNCTION notificar_cache_inteiro();

-- What a cached key resolution depends on: not ultimo_uso_em, written once a minute per key.
CREATE TRIGGER api_keys_notificar_cache
    AFTER UPDATE OF revogado_em, hash, empresa_id OR DELETE ON api_keys
    FOR EACH ROW EXECUTE FUNCTION notificar_cache_da_empresa();
-- ultimo_uso_em only when moved back (an operator's correction): this service only moves it
-- forward, at most once a minute per key, and remembers its own writes.
CREATE TRIGGER api_keys_notificar_cache_ultimo_uso
    AFTER UPDATE OF ultimo_uso_em ON api_keys
    FOR EACH ROW
    WHEN (NEW.ultimo_uso_em IS NULL OR NEW.ultimo_uso_em < OLD.ultimo_uso_em)
    EXECUTE FUNCTION notificar_cache_da_empresa();
CREATE TRIGGER api_keys_notificar_cache_truncate
    AFTER TRUNCATE ON api_keys
    FOR EACH STATEMENT EXECUTE FUNCTION notificar_cache_inteiro();

-- The company a key resolves to (its CNPJ is sent to the PGCC).
CREATE TRIGGER empresas_notificar_cache
    AFTER UPDATE OR DELETE ON empresas
    FOR EACH ROW EXECUTE FUNCTION notificar_cache_da_propria_empresa();
CREATE TRIGGER empresas_notificar_cache_truncate
    AFTER TRUNCATE ON empresas
    FOR EACH STATEMENT EXECUTE FUNCTION notificar_cache_inteiro();

CREATE TRIGGER api_keys_notificar_cache_emissao
    AFTER INSERT ON api_keys
    FOR EACH ROW EXECUTE FUNCTION notificar_cache_da_empresa();
