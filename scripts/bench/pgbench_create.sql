-- What one creation (POST .../criar/ativo) asks the database, statement for statement, as captured
-- with log_statement = 'all' from the service (the same text, the same binds, prepared):
-- BEGIN_CREATION (the owner's `consentimento_iniciar`: the template's use case found and the row
-- stored `em_andamento`), then, after the PGCC answered, CONFIRM_CREATION
-- (`consentimento_confirmar_criacao`: the owner's `consentimento_confirmar`, confirm + history +
-- audit entry; then schedule + event + deliveries, in one call); each statement its own implicit
-- transaction, as the service sends them on one node. The
-- same functions as the service (issue 36), so the baseline is never a cheaper path. Left out: the API-key lookup (cached by the
-- service) and its `ultimo_uso_em` update (once a minute per key).
-- Every bind of the service is a bind here but `cnpj_anuente` (NULL for a direct access; pgbench
-- variables cannot be NULL), sent as text (the service sends binary).
-- The binds the service computes (ids, hash, PGCC id, times, event payload) come from one SELECT
-- first (pgbench has no strings; and no colon in its text, where pgbench would see a variable): one extra round trip, so this figure is slightly below the
-- database's own limit for these statements.
-- pgbench -D companies=N -D use_cases=M (the loaded data set).
\set n random(1, :companies)
\set j random(0, :use_cases - 1)
\set cpf random(10000000000, 99999999999)
SELECT gen_random_uuid() AS id, gen_random_uuid() AS ev, now() AS ts, encode(sha256(convert_to(gen_random_uuid()::text, 'UTF8')), 'hex') AS hash, replace(gen_random_uuid()::text, '-', '') AS sal, 'pgcc-' || replace(gen_random_uuid()::text, '-', '') AS pgcc, '00000000-0000-4000-8000-' || lpad(:n::text, 12, '0') AS emp, format('00000000-0000-4000-a%s-%s', lpad(:j::text, 3, '0'), lpad(:n::text, 12, '0')) AS cu, format('tpl-%s-%s', lpad((:n - 1)::text, 4, '0'), lpad(:j::text, 3, '0')) AS tpl, 'PessoaFisica' AS tipo, 'Direto' AS modalidade, make_timestamptz(2030, 12, 31, 23, 59, 59, 'UTC') AS expira, make_timestamptz(2026, 1, 10, 12, 0, 0, 'UTC') AS respondeu, 'assinatura' || chr(58) || 'bench' AS prova, 'ativo' AS status, 'em_andamento' AS criacao, 'solicitacao.criada' AS tipo_evento, jsonb_build_object('type', 'solicitacao.criada', 'timestamp', now(), 'data', jsonb_build_object('id', gen_random_uuid(), 'pgccId', 'pgcc-c84a9a1f0c64474f0000000000000002', 'status', 'ativo', 'casoDeUsoIdTemplate', 'tpl-0000-003', 'cpfTitular', '***.033.922-**', 'tipoTitular', 'PessoaFisica', 'modalidadeAcesso', 'Direto', 'cnpjAnuente', NULL, 'dataExpiracaoConsentimento', '2030-12-31T23' || chr(58) || '59' || chr(58) || '59Z', 'dataTitularRespondeuConsentimento', '2026-01-10T12' || chr(58) || '00' || chr(58) || '00Z', 'hash', repeat('2f1d39b3', 8), 'criadoEm', now(), 'atualizadoEm', now()))::text AS payload \gset
SELECT gravadas, caso_encontrado, vinculo_id FROM consentimento_iniciar(
    :id, :emp, :tpl, :cpf, :tipo, :modalidade, NULL, :expira, :respondeu, :prova, :status, :hash,
    :sal, :ts, :ts, :ts);
SELECT consentimento_confirmar_criacao(
    :id, :emp, :pgcc, :ts, :hash, :status, :ts, NULL, :ev, :tipo_evento, :payload, :ts, NULL)
    AS confirmadas;
