-- Distributes a migrated consent-api database on a Citus cluster (issue 23, part 4; run by
-- scripts/test-citus.sh on the coordinator after `consent-api migrate`). The order matters and is
-- the only one found to work (docs/scaling.md, "Citus, first contact"): a reference table's
-- foreign keys would turn the tables that reference it into Citus local tables, and a table a
-- local table references cannot be distributed; so every foreign key is set aside first and put
-- back last, once every table is in its final place.
--
--   empresas, api_keys          reference tables (read across companies: the key lookup)
--   every table with empresa_id distributed by empresa_id, co-located with solicitacoes_consentimento
--   the service's own tables    local to the coordinator (PGCC budget and health, signing keys,
--                               backfills, replicas)
--
-- Then grant the runtime role again (`consent-api migrate`, or
-- `SELECT consent_api_conceder_acesso('<runtime role>')`): Citus carries the grants to the shards.
-- The role itself is made on every node beforehand (docs/scaling.md, "Least privilege on Citus").
\set ON_ERROR_STOP on
-- the audit log's append-only triggers check the row they fire on: safe on a shard
SET citus.enable_unsafe_triggers = on;
-- the loop below distributes many tables in one transaction (a DO block): one connection per
-- worker, so no table is distributed after a parallel operation in the same transaction
SET citus.multi_shard_modify_mode TO 'sequential';

CREATE TEMP TABLE chaves_estrangeiras AS
SELECT conrelid::regclass::text AS tabela, conname AS nome, pg_get_constraintdef(oid) AS definicao
FROM pg_constraint
WHERE contype = 'f' AND connamespace = 'public'::regnamespace;

DO $$
DECLARE fk record;
BEGIN
    FOR fk IN SELECT * FROM chaves_estrangeiras LOOP
        EXECUTE format('ALTER TABLE %s DROP CONSTRAINT %I', fk.tabela, fk.nome);
    END LOOP;
END $$;

SELECT create_reference_table('empresas');
SELECT create_reference_table('api_keys');
SELECT create_distributed_table('solicitacoes_consentimento', 'empresa_id');

DO $$
DECLARE t text;
BEGIN
    FOR t IN
        SELECT c.relname FROM pg_class c
        JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname = 'empresa_id' AND NOT a.attisdropped
        WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'p')
          AND c.relname NOT IN ('api_keys', 'solicitacoes_consentimento')
          AND NOT c.relispartition
        ORDER BY c.relname
    LOOP
        PERFORM create_distributed_table(t, 'empresa_id',
                                         colocate_with => 'solicitacoes_consentimento');
    END LOOP;
END $$;

DO $$
DECLARE fk record;
BEGIN
    FOR fk IN SELECT * FROM chaves_estrangeiras LOOP
        EXECUTE format('ALTER TABLE %s ADD CONSTRAINT %I %s', fk.tabela, fk.nome, fk.definicao);
    END LOOP;
END $$;

-- The owner's write functions (docs/security.md, "Least privilege"), run on the company's worker
-- (issue 40, part 2; docs/scaling.md, "Least privilege on Citus"). Citus ties a company's
-- co-located placements, in a transaction, to the connection of the user that first wrote them:
-- run on the coordinator, a SECURITY DEFINER function writes them over an owner's connection and
-- the runtime role's later writes in the same transaction (the first status check, the event,
-- its deliveries) are refused. Distributed by the company's argument with `force_delegation`, the
-- call itself goes over the runtime role's connection to the worker, where the function runs as
-- the owner on the local shards; the rest of the transaction follows on that connection. One
-- definition, the migrations': the same function runs on one node. The service calls each in a
-- delegable form (`SELECT f(...)` or `SELECT ... FROM f(...)`, constant arguments), the
-- coordinator's transaction id passed where the log's order needs it (`settled.rs`).
-- Helpers they call, on every node (no distribution argument: only propagated):
SELECT create_distributed_function('consentimento_transicao_permitida(text, text)');
SELECT create_distributed_function(
    'auditoria_entrada(uuid, text, text, text, text, text, text, text, text, text, timestamptz)');
SELECT create_distributed_function('webhook_url_recebe(text[], text)');
SELECT create_distributed_function(
    'consentimento_iniciar(uuid, uuid, text, text, text, text, text, timestamptz, timestamptz, '
    'text, text, text, text, timestamptz, timestamptz, timestamptz)',
    'p_empresa_id', colocate_with := 'solicitacoes_consentimento', force_delegation := true);
SELECT create_distributed_function(
    'consentimento_confirmar(uuid, uuid, text, timestamptz, text, text, timestamptz, bigint)',
    'p_empresa_id', colocate_with := 'solicitacoes_consentimento', force_delegation := true);
-- the creation's whole confirmation (issue 40, part 2): the owner's function above, the first
-- status check, the event and its deliveries in one call to the worker, committed in one phase
SELECT create_distributed_function(
    'consentimento_confirmar_criacao(uuid, uuid, text, timestamptz, text, text, timestamptz, '
    'bigint, uuid, text, text, timestamptz, text)',
    'p_empresa_id', colocate_with := 'solicitacoes_consentimento', force_delegation := true);
SELECT create_distributed_function('consentimento_cancelar(uuid, uuid, timestamptz)',
    'p_empresa_id', colocate_with := 'solicitacoes_consentimento', force_delegation := true);
SELECT create_distributed_function(
    'consentimento_transicionar(uuid, uuid, text, text, text, text, timestamptz, bigint)',
    'p_empresa_id', colocate_with := 'solicitacoes_consentimento', force_delegation := true);
SELECT create_distributed_function('consentimento_expirar(uuid, timestamptz, bigint, bigint)',
    'p_empresa_id', colocate_with := 'solicitacoes_consentimento', force_delegation := true);
SELECT create_distributed_function('sandbox_apagar_solicitacoes(uuid, uuid[])',
    'p_empresa_id', colocate_with := 'solicitacoes_consentimento', force_delegation := true);
SELECT create_distributed_function(
    'auditoria_guardar_checkpoint(uuid, bigint, bytea, bigint, bigint, text, text, timestamptz)',
    'p_empresa_id', colocate_with := 'solicitacoes_consentimento', force_delegation := true);

-- Every statement of a delegated function planned afresh at each call (issue 40, part 3,
-- docs/scaling.md, "What is left of Citus's cost"). On the worker a function's statements are
-- PL/pgSQL's prepared plans, and Citus caches a plan for the local shard in each. In Citus 13.2.2
-- that cache never hits (the regression of citusdata/citus#8371, fixed by #8824, merged
-- 2026-09): each call plans the shard's statement again and keeps the plan, and a worker's backends grew by about 200 kB a
-- creation (measured: 17 MB -> 1.6 GB of private memory in one worker's backends after 8,000
-- creations, until the connection closes). With custom plans Citus caches nothing: the same
-- planning at each call, and the memory flat (133 MB through 8,400 creations). On a Citus that
-- carries the fix, `ALTER FUNCTION ... RESET plan_cache_mode` lets the cache work (creation's
-- PostgreSQL CPU 3.8 -> 3.0 ms there, docs/scaling.md).
DO $$
DECLARE
    f regprocedure;
BEGIN
    FOR f IN
        SELECT objid::regprocedure FROM pg_catalog.pg_dist_object
        WHERE classid = 'pg_proc'::regclass AND distribution_argument_index IS NOT NULL
    LOOP
        EXECUTE format('ALTER FUNCTION %s SET plan_cache_mode = force_custom_plan', f);
    END LOOP;
END $$;

SELECT logicalrelid::text AS tabela, partmethod AS metodo, colocationid AS colocacao
FROM pg_dist_partition ORDER BY 2, 1;
