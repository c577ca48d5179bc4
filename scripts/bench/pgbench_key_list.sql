-- What one GET /api/casos-de-uso asks the database: the API-key lookup (the key's SHA-256, rebuilt
-- here from n as gen_data.py builds it), then the list; two statements, no transaction block.
\set n random(1, 1000)
WITH b AS (SELECT 'cak_' || encode(sha256(convert_to('bench-key-' || :n, 'UTF8')), 'hex') AS body), h AS (SELECT encode(sha256(convert_to(body || '_' || left(encode(sha256(convert_to(body, 'UTF8')), 'hex'), 8), 'UTF8')), 'hex') AS hash FROM b) SELECT k.id, k.ultimo_uso_em, e.id, e.nome, e.cnpj, e.criado_em FROM api_keys k JOIN empresas e ON e.id = k.empresa_id WHERE k.hash = (SELECT hash FROM h) AND k.revogado_em IS NULL LIMIT 1;
SELECT id, empresa_id, vinculo_id, titulo, pgcc_provider_template_id, data_inclusao, data_ultima_sincronizacao_pgcc FROM casos_de_uso WHERE empresa_id = ('00000000-0000-4000-8000-' || lpad(:n::text, 12, '0'))::uuid AND removido_em IS NULL ORDER BY titulo, id;
