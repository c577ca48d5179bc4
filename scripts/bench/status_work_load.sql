-- scripts/bench/status_work.sh: :n consent requests of 100 companies (80% open: 70% ativo, 10%
-- pendente; the rest revogado), made with generate_series, and the status worker's steady state:
-- every open request in its company's sweep (active every 900 s, pending every 300 s), as the
-- policy leaves them once every request has been checked a few times, and each company's passes
-- due at a random point of their period (companies do not start their passes together).
\set ON_ERROR_STOP 1
INSERT INTO empresas (id, nome, cnpj)
SELECT md5('empresa' || c)::uuid, 'Empresa ' || c, lpad(c::text, 14, '0')
FROM generate_series(1, 100) c;
-- each company's use-case sync schedule, as the service's company creation writes it
INSERT INTO agenda_sincronizacao (empresa_id) SELECT id FROM empresas ON CONFLICT DO NOTHING;
INSERT INTO casos_de_uso (id, empresa_id, titulo, pgcc_provider_template_id)
SELECT md5('caso' || c)::uuid, md5('empresa' || c)::uuid, 'Caso', 'tpl-1'
FROM generate_series(1, 100) c;
INSERT INTO solicitacoes_consentimento (id, empresa_id, caso_de_uso_id, caso_de_uso_id_template,
    cpf_titular, tipo_titular, modalidade_acesso, data_expiracao_consentimento, status, pgcc_id,
    hash, sal_hash, criado_em, atualizado_em, criacao)
SELECT md5('sol' || g)::uuid, md5('empresa' || (g % 100 + 1))::uuid, md5('caso' || (g % 100 + 1))::uuid,
    'tpl-1', '52998224725', 'PessoaFisica', 'Direto', now() + interval '5 years',
    CASE WHEN g % 10 < 7 THEN 'ativo' WHEN g % 10 = 7 THEN 'pendente' ELSE 'revogado' END,
    'carga-' || g, encode(sha256(g::text::bytea), 'hex'), md5(g::text), now(), now(), 'confirmada'
FROM generate_series(1, :n) g;
INSERT INTO verificacoes_status (empresa_id, solicitacao_id, pgcc_id, proxima_em, intervalo_segundos,
    varredura)
SELECT empresa_id, id, pgcc_id, 'infinity',
    CASE WHEN status = 'ativo' THEN 900 ELSE 300 END,
    status
FROM solicitacoes_consentimento WHERE status IN ('ativo', 'pendente');
INSERT INTO varreduras_status (empresa_id, varredura, periodo_segundos, proxima_em)
SELECT md5('empresa' || c)::uuid, l.varredura, l.periodo,
    now() + random() * l.periodo * interval '1 second'
FROM generate_series(1, 100) c,
     (VALUES ('pendente', 300), ('ativo', 900)) AS l(varredura, periodo);
VACUUM ANALYZE;
