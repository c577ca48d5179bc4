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

SELECT logicalrelid::text AS tabela, partmethod AS metodo, colocationid AS colocacao
FROM pg_dist_partition ORDER BY 2, 1;
