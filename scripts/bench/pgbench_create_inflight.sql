-- Lever of issue 15, measured, not built: a separate in-flight table. The same creation as
-- pgbench_create.sql (same prelude, the use case found in the first insert as BEGIN_CREATION does, same binds), but the row `em_andamento`
-- goes to bench_em_andamento (created by bench.sh: LIKE solicitacoes_consentimento, primary key
-- only), and the confirmation moves it: DELETE from there, INSERT the confirmed row once into
-- solicitacoes_consentimento (no insert-then-update: one heap tuple and one entry per index
-- instead of two, no dead tuple for vacuum), event, deliveries and history as today.
-- Not what a real design must add: the check that the id is not already confirmed (today the
-- ON CONFLICT of BEGIN_CREATION does it in the same statement).
\set n random(1, :companies)
\set j random(0, :use_cases - 1)
\set cpf random(10000000000, 99999999999)
SELECT gen_random_uuid() AS id, gen_random_uuid() AS ev, now() AS ts, encode(sha256(convert_to(gen_random_uuid()::text, 'UTF8')), 'hex') AS hash, 'pgcc-' || replace(gen_random_uuid()::text, '-', '') AS pgcc, '00000000-0000-4000-8000-' || lpad(:n::text, 12, '0') AS emp, format('00000000-0000-4000-a%s-%s', lpad(:j::text, 3, '0'), lpad(:n::text, 12, '0')) AS cu, format('tpl-%s-%s', lpad((:n - 1)::text, 4, '0'), lpad(:j::text, 3, '0')) AS tpl, 'PessoaFisica' AS tipo, 'Direto' AS modalidade, make_timestamptz(2030, 12, 31, 23, 59, 59, 'UTC') AS expira, make_timestamptz(2026, 1, 10, 12, 0, 0, 'UTC') AS respondeu, 'assinatura' || chr(58) || 'bench' AS prova, 'ativo' AS status, 'em_andamento' AS criacao, 'solicitacao.criada' AS tipo_evento, jsonb_build_object('type', 'solicitacao.criada', 'timestamp', now(), 'data', jsonb_build_object('id', gen_random_uuid(), 'pgccId', 'pgcc-c84a9a1f0c64474f0000000000000002', 'status', 'ativo', 'casoDeUsoIdTemplate', 'tpl-0000-003', 'cpfTitular', '***.033.922-**', 'tipoTitular', 'PessoaFisica', 'modalidadeAcesso', 'Direto', 'cnpjAnuente', NULL, 'dataExpiracaoConsentimento', '2030-12-31T23' || chr(58) || '59' || chr(58) || '59Z', 'dataTitularRespondeuConsentimento', '2026-01-10T12' || chr(58) || '00' || chr(58) || '00Z', 'hash', repeat('2f1d39b3', 8), 'criadoEm', now(), 'atualizadoEm', now()))::text AS payload \gset
WITH caso AS (
    SELECT id, vinculo_id FROM casos_de_uso
    WHERE empresa_id = :emp AND pgcc_provider_template_id = :tpl AND removido_em IS NULL
    LIMIT 1
)
INSERT INTO bench_em_andamento AS s (
    id, empresa_id, caso_de_uso_id, caso_de_uso_id_template, cpf_titular, tipo_titular,
    modalidade_acesso, cnpj_anuente, data_expiracao_consentimento,
    data_titular_respondeu_consentimento, prova_coleta, status, hash, criado_em, atualizado_em,
    criacao, criacao_tentativa_em)
SELECT :id, :emp, caso.id, :tpl, :cpf, :tipo, :modalidade, NULL, :expira, :respondeu, :prova, :status, :hash, :ts, :ts, :criacao, :ts FROM caso
ON CONFLICT (empresa_id, id) DO UPDATE
SET criacao = EXCLUDED.criacao, criacao_tentativa_em = EXCLUDED.criacao_tentativa_em,
    criacao_nao_encontrada_em = NULL
WHERE s.criacao <> 'confirmada';
WITH movida AS (
    DELETE FROM bench_em_andamento
    WHERE id = :id AND empresa_id = :emp AND criacao IN ('em_andamento', 'cancelada')
      AND hash = :hash AND status = :status AND atualizado_em = :ts
    RETURNING id, empresa_id, caso_de_uso_id, caso_de_uso_id_template, cpf_titular, tipo_titular, modalidade_acesso, cnpj_anuente, data_expiracao_consentimento, data_titular_respondeu_consentimento, prova_coleta, status, hash, criado_em, atualizado_em
), confirmada AS (
    INSERT INTO solicitacoes_consentimento (id, empresa_id, caso_de_uso_id, caso_de_uso_id_template, cpf_titular, tipo_titular, modalidade_acesso, cnpj_anuente, data_expiracao_consentimento, data_titular_respondeu_consentimento, prova_coleta, status, hash, criado_em, atualizado_em, criacao, pgcc_id, proximo_status_em)
    SELECT id, empresa_id, caso_de_uso_id, caso_de_uso_id_template, cpf_titular, tipo_titular, modalidade_acesso, cnpj_anuente, data_expiracao_consentimento, data_titular_respondeu_consentimento, prova_coleta, status, hash, criado_em, atualizado_em, 'confirmada', :pgcc, :ts FROM movida
    RETURNING id, empresa_id, status, criado_em
), eventos AS (
    INSERT INTO webhook_eventos (id, empresa_id, tipo, payload, criado_em)
    SELECT :ev, empresa_id, :tipo_evento, :payload, :ts FROM confirmada
    RETURNING id, empresa_id, tipo, criado_em
), entregas AS (
INSERT INTO webhook_entregas (id, evento_id, webhook_url_id, empresa_id, status, tentativas, proxima_tentativa_em, criado_em, atualizado_em)
SELECT gen_random_uuid(), e.id, u.id, e.empresa_id, 'pendente', 0,
       e.criado_em, e.criado_em, e.criado_em
FROM eventos e
JOIN webhook_urls u ON u.empresa_id = e.empresa_id
WHERE u.removido_em IS NULL AND u.desativado_em IS NULL
  AND (u.eventos IS NULL OR e.tipo = ANY (u.eventos))
)
INSERT INTO solicitacoes_historico (empresa_id, solicitacao_id, de, para, em, causa)
SELECT empresa_id, id, NULL, status, criado_em, 'empresa' FROM confirmada;
