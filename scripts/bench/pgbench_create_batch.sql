-- Lever of issue 15, measured, not built: creations batched across requests ("group commit":
-- concurrent requests' statements gathered into one). The same two statements as
-- pgbench_create.sql, each written for :k creations at once (parallel arrays, unnest), so that
-- :k creations share one BEGIN_CREATION and one CONFIRM_CREATION (two commits, two round trips,
-- one plan execution each). The prelude makes the :k creations' binds (random companies and
-- their templates, as pgbench_create.sql does for one). Run with -D k=1 it is the same work as
-- pgbench_create.sql in this batched form: the lever is k x TPS(k) / TPS(1).
-- Per creation the answer of the first statement is what the service needs (stored or not, the
-- template found, the link); the second writes, per confirmed row, its event, deliveries and
-- history. Left out, and a real design would need them: the hand-off between requests (a leader
-- running the batch for the followers waiting on it) and a fallback to one by one when a batch
-- fails. Run it with plan_cache_mode = force_generic_plan (batch_lever.sh does): with array binds
-- PostgreSQL would otherwise plan it again on every execution.
-- pgbench -D companies=N -D use_cases=M -D k=K (scripts/bench/batch_lever.sh).
SELECT array_agg(id)::text AS ids, array_agg(ev)::text AS evs, array_agg(emp)::text AS emps, array_agg(tpl)::text AS tpls, array_agg(cpf)::text AS cpfs, array_agg(hash)::text AS hashes, array_agg(sal)::text AS sals, array_agg(pgcc)::text AS pgccs, now() AS ts, make_timestamptz(2030, 12, 31, 23, 59, 59, 'UTC') AS expira, make_timestamptz(2026, 1, 10, 12, 0, 0, 'UTC') AS respondeu, 'assinatura' || chr(58) || 'bench' AS prova, 'PessoaFisica' AS tipo, 'Direto' AS modalidade, 'ativo' AS status, 'solicitacao.criada' AS tipo_evento, jsonb_build_object('type', 'solicitacao.criada', 'timestamp', now(), 'data', jsonb_build_object('id', gen_random_uuid(), 'pgccId', 'pgcc-c84a9a1f0c64474f0000000000000002', 'status', 'ativo', 'casoDeUsoIdTemplate', 'tpl-0000-003', 'cpfTitular', '***.033.922-**', 'tipoTitular', 'PessoaFisica', 'modalidadeAcesso', 'Direto', 'cnpjAnuente', NULL, 'dataExpiracaoConsentimento', '2030-12-31T23' || chr(58) || '59' || chr(58) || '59Z', 'dataTitularRespondeuConsentimento', '2026-01-10T12' || chr(58) || '00' || chr(58) || '00Z', 'hash', repeat('2f1d39b3', 8), 'criadoEm', now(), 'atualizadoEm', now()))::text AS payload FROM (SELECT gen_random_uuid() AS id, gen_random_uuid() AS ev, '00000000-0000-4000-8000-' || lpad(n::text, 12, '0') AS emp, format('tpl-%s-%s', lpad((n - 1)::text, 4, '0'), lpad(j::text, 3, '0')) AS tpl, (10000000000 + (random() * 89999999999)::bigint)::text AS cpf, encode(sha256(convert_to(gen_random_uuid()::text, 'UTF8')), 'hex') AS hash, replace(gen_random_uuid()::text, '-', '') AS sal, 'pgcc-' || replace(gen_random_uuid()::text, '-', '') AS pgcc FROM (SELECT 1 + (random() * (:companies - 1))::int AS n, (random() * (:use_cases - 1))::int AS j FROM generate_series(1, :k)) r) x \gset
WITH entrada AS (
    SELECT * FROM unnest(:ids::uuid[], :emps::uuid[], :tpls::text[], :cpfs::text[], :hashes::text[], :sals::text[]) AS i(id, empresa_id, tpl, cpf, hash, sal)
), caso AS (
    SELECT DISTINCT ON (e.id) e.id AS pedido, c.id, c.vinculo_id FROM entrada e
    JOIN casos_de_uso c ON c.empresa_id = e.empresa_id AND c.pgcc_provider_template_id = e.tpl AND c.removido_em IS NULL
), alvo AS (
    SELECT e.*, COALESCE(caso.id, (SELECT s.caso_de_uso_id FROM solicitacoes_consentimento s WHERE s.empresa_id = e.empresa_id AND s.id = e.id)) AS caso_de_uso_id
    FROM entrada e LEFT JOIN caso ON caso.pedido = e.id
), gravada AS (
    INSERT INTO solicitacoes_consentimento AS s (
        id, empresa_id, caso_de_uso_id, caso_de_uso_id_template, cpf_titular, tipo_titular,
        modalidade_acesso, cnpj_anuente, data_expiracao_consentimento,
        data_titular_respondeu_consentimento, prova_coleta, status, hash, sal_hash, criado_em,
        atualizado_em, criacao, criacao_tentativa_em)
    SELECT a.id, a.empresa_id, a.caso_de_uso_id, a.tpl, a.cpf, :tipo, :modalidade, NULL, :expira,
        :respondeu, :prova, :status, a.hash, a.sal, :ts, :ts, 'em_andamento', :ts
    FROM alvo a WHERE a.caso_de_uso_id IS NOT NULL
    ON CONFLICT (empresa_id, id) DO UPDATE
    SET criacao = EXCLUDED.criacao, criacao_tentativa_em = EXCLUDED.criacao_tentativa_em,
        criacao_nao_encontrada_em = NULL
    WHERE s.criacao <> 'confirmada'
    RETURNING s.id
)
SELECT e.id, EXISTS (SELECT 1 FROM gravada g WHERE g.id = e.id) AS gravada, caso.id IS NOT NULL AS caso_encontrado, caso.vinculo_id
FROM entrada e LEFT JOIN caso ON caso.pedido = e.id;
WITH entrada AS (
    SELECT * FROM unnest(:ids::uuid[], :emps::uuid[], :hashes::text[], :pgccs::text[], :evs::uuid[]) AS i(id, empresa_id, hash, pgcc, ev)
), confirmada AS (
    UPDATE solicitacoes_consentimento s
    SET criacao = 'confirmada', pgcc_id = e.pgcc, criacao_tentativa_em = NULL, criacao_nao_encontrada_em = NULL, proximo_status_em = :ts
    FROM entrada e
    WHERE s.id = e.id AND s.empresa_id = e.empresa_id AND s.criacao IN ('em_andamento', 'cancelada')
      AND s.hash = e.hash AND s.status = :status AND s.atualizado_em = :ts
    RETURNING s.id, s.empresa_id, s.status, s.criado_em, e.ev
), eventos AS (
    INSERT INTO webhook_eventos (id, empresa_id, tipo, payload, criado_em)
    SELECT ev, empresa_id, :tipo_evento, :payload, :ts FROM confirmada
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
