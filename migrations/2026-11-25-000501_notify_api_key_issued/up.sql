-- A key issued anywhere (any instance, the CLI) tells every process, so none keeps refusing it
-- from its memory of unknown keys (application::cache::UnknownKeys): the payload is the
-- company's id, as for a revocation.
CREATE TRIGGER api_keys_notificar_cache_emissao
    AFTER INSERT ON api_keys
    FOR EACH ROW EXECUTE FUNCTION notificar_cache_da_empresa();
