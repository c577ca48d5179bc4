-- Issue 40, part 2: a creation's confirmation in one call. The owner's `consentimento_confirmar`
-- (the row, its history, its audit entry) and what the runtime role writes with it (the first
-- status check, the `solicitacao.criada` event and its deliveries, or the event's mark when no
-- URL takes it), one function for both deployments:
-- - on one node the service calls it alone, one statement in its own transaction (the
--   statement with data-modifying CTEs it replaces did the same in one round trip);
-- - on Citus it is distributed by `p_empresa_id` with `force_delegation`
--   (scripts/citus/distribute.sql): the coordinator sends the call to the company's worker,
--   where each statement below writes the local shards. It replaces the confirmation as one
--   statement each over the coordinator (`confirm_routed.rs`): six statements planned on the
--   coordinator and again on the worker, and the deliveries' `INSERT ... SELECT
--   gen_random_uuid()`, which Citus pulled through the coordinator and copied back, so every
--   creation committed in two phases.
-- `p_transacao` is the coordinator's transaction id on Citus (a worker's own
-- `pg_current_xact_id()` is not the log's nor the events feed's order); NULL on one node, where
-- this transaction's own id is taken. The event takes it too, for the same reason.
--
-- SECURITY INVOKER: it writes the operational rows as the caller, the runtime role, which may
-- write them anyway, and reaches the evidence only through the owner's function it calls. Each
-- statement names the company, so Citus plans each on the company's shard; the deliveries are
-- written one row at a time (a router `INSERT ... VALUES`) for the same reason. Which URLs take
-- the event is `url_takes!` in crates/adapters/postgres/src/outbox.rs, through
-- `webhook_url_recebe` below, its one definition.
CREATE OR REPLACE FUNCTION webhook_url_recebe(p_eventos text[], p_tipo text)
RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE
-- `auditoria.checkpoint` only when named (domain::EventType::only_when_named)
RETURN (p_eventos IS NULL AND p_tipo <> 'auditoria.checkpoint') OR p_tipo = ANY (p_eventos);

CREATE OR REPLACE FUNCTION consentimento_confirmar_criacao(
    p_id uuid, p_empresa_id uuid, p_pgcc_id text, p_proximo_status_em timestamptz, p_hash text,
    p_status text, p_atualizado_em timestamptz, p_transacao bigint, p_evento_id uuid,
    p_evento_tipo text, p_evento_payload text, p_evento_em timestamptz,
    p_evento_traceparent text)
RETURNS integer
LANGUAGE plpgsql
SET search_path = public, pg_temp
AS $$
DECLARE
    r solicitacoes_consentimento;
    v_urls uuid[];
    u uuid;
BEGIN
    SELECT * INTO r FROM consentimento_confirmar(
        p_id, p_empresa_id, p_pgcc_id, p_proximo_status_em, p_hash, p_status, p_atualizado_em,
        p_transacao);
    IF NOT FOUND THEN
        RETURN 0;
    END IF;
    -- its first status check, when the PGCC may still change it
    IF r.status IN ('pendente', 'ativo') THEN
        INSERT INTO verificacoes_status (empresa_id, solicitacao_id, pgcc_id, proxima_em)
        VALUES (r.empresa_id, r.id, r.pgcc_id, p_proximo_status_em)
        ON CONFLICT DO NOTHING;
    END IF;
    -- the URLs that take the event, read once: the event's mark (none takes it) and its
    -- deliveries come from this one read, so they agree
    SELECT array_agg(w.id) INTO v_urls FROM webhook_urls w
    WHERE w.empresa_id = p_empresa_id AND w.removido_em IS NULL AND w.desativado_em IS NULL
      AND webhook_url_recebe(w.eventos, p_evento_tipo);
    INSERT INTO webhook_eventos (id, empresa_id, tipo, payload, criado_em, traceparent,
                                 sem_entregas, transacao)
    VALUES (p_evento_id, p_empresa_id, p_evento_tipo, p_evento_payload, p_evento_em,
            p_evento_traceparent, v_urls IS NULL,
            COALESCE(p_transacao, (pg_current_xact_id()::text)::bigint));
    -- one pending delivery per URL, due at once
    FOREACH u IN ARRAY COALESCE(v_urls, '{}') LOOP
        INSERT INTO webhook_entregas (id, evento_id, webhook_url_id, empresa_id, status,
                                      tentativas, proxima_tentativa_em, criado_em, atualizado_em,
                                      tipo_evento)
        VALUES (gen_random_uuid(), p_evento_id, u, p_empresa_id, 'pendente', 0, p_evento_em,
                p_evento_em, p_evento_em, p_evento_tipo);
    END LOOP;
    RETURN 1;
END
$$;

-- The audit entry of a confirmation and of a transition from values, the company's CNPJ read
-- first: on the company's Citus worker an `INSERT ... SELECT` from `empresas` (a reference
-- table) into `auditoria_entradas` (distributed) is not one shard's statement, and Citus ran it
-- "via the coordinator", the worker selecting into an intermediate result and copying it back,
-- at every creation and revocation (`perf` on the workers: 10% of their time during creations).
-- Same entry, same bytes; a company that does not exist now stops the confirmation with an error
-- (its request's foreign key already excludes it) where the statement wrote no entry.
CREATE OR REPLACE FUNCTION consentimento_confirmar(
    p_id uuid, p_empresa_id uuid, p_pgcc_id text, p_proximo_status_em timestamptz, p_hash text,
    p_status text, p_atualizado_em timestamptz, p_transacao bigint)
RETURNS SETOF solicitacoes_consentimento
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = public, pg_temp
AS $$
DECLARE
    r solicitacoes_consentimento;
    v_importacao uuid;
    v_id_externo text;
    v_origem text;
    v_cnpj text;
BEGIN
    SELECT l.importacao_id, l.id_externo, l.origem INTO v_importacao, v_id_externo, v_origem
    FROM importacao_linhas l
    WHERE l.empresa_id = p_empresa_id AND l.solicitacao_id = p_id
    LIMIT 1;
    UPDATE solicitacoes_consentimento s
    SET criacao = 'confirmada', pgcc_id = p_pgcc_id, criacao_tentativa_em = NULL,
        criacao_nao_encontrada_em = NULL, proximo_status_em = p_proximo_status_em,
        origem = v_origem
    WHERE s.id = p_id AND s.empresa_id = p_empresa_id
      AND s.criacao IN ('em_andamento', 'cancelada')
      AND s.hash = p_hash AND s.status = p_status AND s.atualizado_em = p_atualizado_em
      AND consentimento_transicao_permitida(NULL, s.status)
    RETURNING s.* INTO r;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    INSERT INTO solicitacoes_historico (empresa_id, solicitacao_id, de, para, em, causa)
    VALUES (r.empresa_id, r.id, NULL, r.status, r.criado_em, 'empresa');
    SELECT e.cnpj INTO STRICT v_cnpj FROM empresas e WHERE e.id = r.empresa_id;
    INSERT INTO auditoria_entradas (empresa_id, solicitacao_id, entrada, transacao)
    VALUES (r.empresa_id, r.id,
        CASE WHEN v_importacao IS NULL THEN auditoria_entrada(
            r.id, r.pgcc_id, v_cnpj, r.caso_de_uso_id_template, NULL, r.status, 'empresa', NULL,
            r.prova_coleta, r.hash, r.criado_em)
        ELSE auditoria_entrada_importada(
            r.id, r.pgcc_id, v_cnpj, r.caso_de_uso_id_template, NULL, r.status, 'empresa', NULL,
            r.prova_coleta, r.hash, r.criado_em, v_importacao, v_id_externo, v_origem,
            r.data_titular_respondeu_consentimento)
        END,
        COALESCE(p_transacao, (pg_current_xact_id()::text)::bigint));
    RETURN NEXT r;
END
$$;

CREATE OR REPLACE FUNCTION consentimento_transicionar(
    p_empresa_id uuid, p_id uuid, p_de text, p_para text, p_causa text, p_motivo text,
    p_em timestamptz, p_transacao bigint)
RETURNS SETOF solicitacoes_consentimento
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = public, pg_temp
AS $$
DECLARE
    r solicitacoes_consentimento;
    v_cnpj text;
BEGIN
    IF p_de IS NULL OR NOT consentimento_transicao_permitida(p_de, p_para) THEN
        RAISE EXCEPTION 'a consent request does not move from % to %', p_de, p_para
            USING ERRCODE = 'check_violation';
    END IF;
    UPDATE solicitacoes_consentimento s
    SET status = p_para, atualizado_em = p_em
    WHERE s.empresa_id = p_empresa_id AND s.id = p_id AND s.criacao = 'confirmada'
      AND s.status = p_de
    RETURNING s.* INTO r;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    INSERT INTO solicitacoes_historico (empresa_id, solicitacao_id, de, para, em, causa, motivo)
    VALUES (r.empresa_id, r.id, p_de, p_para, p_em, p_causa, p_motivo);
    SELECT e.cnpj INTO STRICT v_cnpj FROM empresas e WHERE e.id = r.empresa_id;
    INSERT INTO auditoria_entradas (empresa_id, solicitacao_id, entrada, transacao)
    VALUES (r.empresa_id, r.id, auditoria_entrada(
        r.id, r.pgcc_id, v_cnpj, r.caso_de_uso_id_template, p_de, r.status, p_causa, p_motivo,
        r.prova_coleta, r.hash, p_em),
        COALESCE(p_transacao, (pg_current_xact_id()::text)::bigint));
    RETURN NEXT r;
END
$$;
