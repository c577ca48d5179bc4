-- One load step of `make bench-scale` (scripts/bench-scale.sh): @COUNT@ more consent requests
-- (rows @START@.. of gen_scale.py, streamed by COPY, nothing on disk) with their history, into
-- the migrated schema. The two tables' indexes, unique and foreign keys are dropped first and
-- built again after (a sort per index instead of 10^7 random insertions into each); the foreign
-- keys come back NOT VALID (the generator's ids are valid by construction: validating would only
-- re-read every row). Then VACUUM ANALYZE, as `make bench` does after its load, and a CHECKPOINT.
\set ON_ERROR_STOP on
SET client_min_messages = warning;
SET maintenance_work_mem = '512MB';
SET synchronous_commit = off;
DROP TABLE IF EXISTS bench_ddl;
CREATE TABLE bench_ddl AS
WITH t(rel) AS (VALUES ('solicitacoes_consentimento'::regclass), ('solicitacoes_historico'::regclass))
SELECT 1 AS ord, format('ALTER TABLE %s ADD CONSTRAINT %I %s', c.conrelid::regclass, c.conname, pg_get_constraintdef(c.oid)) AS ddl,
       format('ALTER TABLE %s DROP CONSTRAINT %I', c.conrelid::regclass, c.conname) AS undo
FROM pg_constraint c WHERE c.contype IN ('p', 'u') AND c.conrelid IN (SELECT rel FROM t)
UNION ALL
SELECT 2, pg_get_indexdef(i.indexrelid), format('DROP INDEX %s', i.indexrelid::regclass)
FROM pg_index i WHERE i.indrelid IN (SELECT rel FROM t)
  AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid AND c.contype IN ('p', 'u'))
UNION ALL
SELECT 3, format('ALTER TABLE %s ADD CONSTRAINT %I %s NOT VALID', c.conrelid::regclass, c.conname, pg_get_constraintdef(c.oid)),
       format('ALTER TABLE %s DROP CONSTRAINT %I', c.conrelid::regclass, c.conname)
FROM pg_constraint c WHERE c.contype = 'f' AND (c.conrelid IN (SELECT rel FROM t) OR c.confrelid IN (SELECT rel FROM t));
SELECT undo FROM bench_ddl ORDER BY ord DESC \gexec
\copy solicitacoes_consentimento (id, empresa_id, caso_de_uso_id, caso_de_uso_id_template, cpf_titular, tipo_titular, modalidade_acesso, cnpj_anuente, data_expiracao_consentimento, data_titular_respondeu_consentimento, prova_coleta, status, pgcc_id, criado_em, atualizado_em, hash, proximo_status_em, criacao, criacao_tentativa_em) FROM PROGRAM 'python3 @GEN@ @COMPANIES@ @PER_COMPANY@ @START@ @COUNT@ @BASE@' WITH (FORMAT csv)
-- History: the creation entry of each new request, as the service writes it, and the move that
-- brought the refused and expired ones to their status.
INSERT INTO solicitacoes_historico (empresa_id, solicitacao_id, de, para, em, causa)
SELECT empresa_id, id, NULL, CASE WHEN status IN ('pendente', 'recusado') THEN 'pendente' ELSE 'ativo' END, criado_em, 'empresa'
FROM solicitacoes_consentimento WHERE criado_em >= timestamptz '@BASE@' + @START@ * interval '1 ms';
INSERT INTO solicitacoes_historico (empresa_id, solicitacao_id, de, para, em, causa)
SELECT empresa_id, id, CASE status WHEN 'recusado' THEN 'pendente' ELSE 'ativo' END, status,
       CASE status WHEN 'recusado' THEN criado_em + interval '1 day' ELSE data_expiracao_consentimento END,
       CASE status WHEN 'recusado' THEN 'pgcc' ELSE 'expiracao' END
FROM solicitacoes_consentimento
WHERE status IN ('recusado', 'expirado') AND criado_em >= timestamptz '@BASE@' + @START@ * interval '1 ms';
-- The status worker's schedule (issue 21): each open request of this load, in the policy's steady
-- state (active ones due over the next 900 s, pending ones over the next 300 s), as the service
-- keeps it; the request path's writes then maintain a table of the real size.
INSERT INTO verificacoes_status (empresa_id, solicitacao_id, pgcc_id, proxima_em, intervalo_segundos)
SELECT empresa_id, id, pgcc_id,
       now() + random() * CASE WHEN status = 'ativo' THEN interval '900 s' ELSE interval '300 s' END,
       CASE WHEN status = 'ativo' THEN 900 ELSE 300 END
FROM solicitacoes_consentimento
WHERE status IN ('ativo', 'pendente') AND criacao = 'confirmada'
  AND criado_em >= timestamptz '@BASE@' + @START@ * interval '1 ms'
ON CONFLICT DO NOTHING;
SELECT ddl FROM bench_ddl ORDER BY ord \gexec
DROP TABLE bench_ddl;
VACUUM ANALYZE solicitacoes_consentimento;
VACUUM ANALYZE solicitacoes_historico;
VACUUM ANALYZE verificacoes_status;
-- Write the load's dirty pages now, not during the measurements (a checkpoint triggered by the
-- load's WAL would otherwise run under them: the 10^6 step measured slower than 10^7 without it).
CHECKPOINT;
