-- When each company's scheduled use-case synchronization is next due. Every process running the
-- scheduled sync claims due companies one at a time (UPDATE ... FOR UPDATE SKIP LOCKED) and moves
-- them to their next period, so a company is synchronized once per period however many
-- processes run the job. A table of its own, not a column of empresas: a claim must not fire
-- empresas' cache triggers (which tell every process that the company changed).
CREATE TABLE agenda_sincronizacao (
    empresa_id uuid        PRIMARY KEY REFERENCES empresas (id) ON DELETE CASCADE,
    proxima_em timestamptz NOT NULL DEFAULT '-infinity'
);

CREATE INDEX agenda_sincronizacao_proxima_em_idx ON agenda_sincronizacao (proxima_em);

INSERT INTO agenda_sincronizacao (empresa_id) SELECT id FROM empresas;

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
