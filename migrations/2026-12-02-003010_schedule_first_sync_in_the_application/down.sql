CREATE FUNCTION agendar_sincronizacao_da_empresa() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO agenda_sincronizacao (empresa_id) VALUES (NEW.id) ON CONFLICT DO NOTHING;
    RETURN NULL;
END
$$;

CREATE TRIGGER empresas_agendar_sincronizacao
    AFTER INSERT ON empresas
    FOR EACH ROW EXECUTE FUNCTION agendar_sincronizacao_da_empresa();
