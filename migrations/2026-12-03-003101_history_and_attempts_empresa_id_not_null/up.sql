-- `empresa_id` NOT NULL on the history and the delivery attempts (issue 23, part 3): the last two
-- tenant tables whose rows could lack their company. Planned for "the release after the
-- backfills" (2026-12-02-003001); brought forward because no production deployment exists yet,
-- so every existing database is a development or staging one, with few rows.
--
-- First what the backfills (crates/adapters/postgres/src/backfills.rs) have not done yet, in this
-- transaction: nothing once they have run, and on a fresh database. A database with millions of
-- rows still to fill should run `consent-api migrate` with the backfills (or let the service run
-- them) on the release before this one (docs/operations.md, "Migrate"). Ids are random UUIDs the
-- service generates, so a request's or a delivery's id names one row.
UPDATE solicitacoes_historico h SET empresa_id = s.empresa_id
FROM solicitacoes_consentimento s
WHERE h.empresa_id IS NULL AND s.id = h.solicitacao_id;
UPDATE webhook_tentativas t SET empresa_id = d.empresa_id
FROM webhook_entregas d
WHERE t.empresa_id IS NULL AND d.id = t.entrega_id;
UPDATE preenchimentos_retroativos SET concluido_em = now()
WHERE nome IN ('solicitacoes_historico_empresa_id', 'webhook_tentativas_empresa_id')
  AND concluido_em IS NULL;

-- The CHECKs added NOT VALID are validated (a scan under SHARE UPDATE EXCLUSIVE), so SET NOT NULL
-- finds a valid proof and does not scan again under its ACCESS EXCLUSIVE lock; the CHECKs then
-- have nothing left to say.
ALTER TABLE solicitacoes_historico VALIDATE CONSTRAINT solicitacoes_historico_empresa_id_not_null;
ALTER TABLE webhook_tentativas VALIDATE CONSTRAINT webhook_tentativas_empresa_id_not_null;
-- (adding-not-nullable-field: the validated CHECK proves it; no scan under the lock.)
-- squawk-ignore adding-not-nullable-field
ALTER TABLE solicitacoes_historico ALTER COLUMN empresa_id SET NOT NULL;
-- (adding-not-nullable-field: as above.)
-- squawk-ignore adding-not-nullable-field
ALTER TABLE webhook_tentativas ALTER COLUMN empresa_id SET NOT NULL;
-- (ban-drop-constraint: the CHECK's guarantee is kept by the column's NOT NULL, set just above.)
-- squawk-ignore ban-drop-constraint
ALTER TABLE solicitacoes_historico DROP CONSTRAINT solicitacoes_historico_empresa_id_not_null;
-- (ban-drop-constraint: as above.)
-- squawk-ignore ban-drop-constraint
ALTER TABLE webhook_tentativas DROP CONSTRAINT webhook_tentativas_empresa_id_not_null;
