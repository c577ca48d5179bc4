-- The list query of GET /api/casos-de-uso (as diesel sends it) for a random company's 100 use cases.
\set n random(1, 1000)
SELECT id, empresa_id, vinculo_id, titulo, pgcc_provider_template_id, data_inclusao, data_ultima_sincronizacao_pgcc FROM casos_de_uso WHERE empresa_id = ('00000000-0000-4000-8000-' || lpad(:n::text, 12, '0'))::uuid AND removido_em IS NULL ORDER BY titulo, id;
