-- Loads gen_data.py's CSV files into the migrated schema, then ANALYZE. @DIR@ is replaced by their
-- folder (scripts/bench.sh): psql does not expand variables in \copy.
\set ON_ERROR_STOP on
BEGIN;
\copy empresas (id, nome, cnpj, criado_em) FROM '@DIR@/empresas.csv' WITH (FORMAT csv)
-- each company's use-case sync schedule, as the service's company creation writes it
INSERT INTO agenda_sincronizacao (empresa_id) SELECT id FROM empresas ON CONFLICT DO NOTHING;
\copy api_keys (id, empresa_id, hash, prefixo, criado_em) FROM '@DIR@/api_keys.csv' WITH (FORMAT csv)
\copy casos_de_uso (id, empresa_id, vinculo_id, titulo, pgcc_provider_template_id, data_inclusao, data_ultima_sincronizacao_pgcc) FROM '@DIR@/casos_de_uso.csv' WITH (FORMAT csv)
\copy solicitacoes_consentimento (id, empresa_id, caso_de_uso_id, caso_de_uso_id_template, cpf_titular, tipo_titular, modalidade_acesso, cnpj_anuente, data_expiracao_consentimento, data_titular_respondeu_consentimento, prova_coleta, status, pgcc_id, criado_em, atualizado_em, hash, proximo_status_em, criacao, criacao_tentativa_em) FROM '@DIR@/solicitacoes.csv' WITH (FORMAT csv)
-- Each request's creation entry in its history, as the service writes it.
INSERT INTO solicitacoes_historico (empresa_id, solicitacao_id, de, para, em, causa)
SELECT empresa_id, id, NULL, CASE WHEN status = 'pendente' THEN 'pendente' ELSE 'ativo' END, criado_em, 'empresa'
FROM solicitacoes_consentimento;
COMMIT;
-- VACUUM too, not just ANALYZE: otherwise autovacuum visits the freshly loaded tables (set their
-- visibility maps) during the first scenarios, and its CPU is counted as theirs.
VACUUM ANALYZE;
