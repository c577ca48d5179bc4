-- Every tenant table carries its company (issue 23, part 3; docs/scaling.md, "Citus"): the
-- history and the delivery attempts were the two without `empresa_id`, so they could be neither
-- distributed by company nor keyed by it. Nullable, no default: the catalog changes, no row is
-- rewritten. The service writes it on every insert from now on; the rows written before get it
-- from the backfills registered below (crates/adapters/postgres/src/backfills.rs), in keyset
-- batches after the migration.
ALTER TABLE solicitacoes_historico ADD COLUMN empresa_id uuid;
ALTER TABLE webhook_tentativas ADD COLUMN empresa_id uuid;

-- NOT VALID: every new row is checked at once; the rows before the backfill are not. Validated,
-- with the column made NOT NULL and the primary key made `(empresa_id, id)`, by the release after
-- the backfills have completed everywhere (docs/operations.md, "Migrate").
ALTER TABLE solicitacoes_historico
    ADD CONSTRAINT solicitacoes_historico_empresa_id_not_null CHECK (empresa_id IS NOT NULL) NOT VALID;
ALTER TABLE webhook_tentativas
    ADD CONSTRAINT webhook_tentativas_empresa_id_not_null CHECK (empresa_id IS NOT NULL) NOT VALID;

INSERT INTO preenchimentos_retroativos (nome) VALUES
    ('solicitacoes_historico_empresa_id'), ('webhook_tentativas_empresa_id');
