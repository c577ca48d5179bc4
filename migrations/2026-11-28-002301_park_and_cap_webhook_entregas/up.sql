-- Deliveries claimed in time proportional to the companies with due work (issue 21, part 2).
--
-- `estacionada`: a pending delivery of a disabled URL is parked: still `pendente` (the delivery
-- log shows it so, and `reativar` makes it due again), but out of the claim's index
-- (webhook_entregas_devidas_empresa_idx), so the claim never walks it. Set and cleared in bounded
-- batches by the delivery worker behind the URL's change (`entregas_por_acertar` below).
-- `motivo`: why the service gave a delivery up without an attempt (the company's cap of pending
-- deliveries, `webhooks.max_pending_per_company`); NULL for every other delivery.
-- `webhook_urls.entregas_por_acertar`: the URL was removed, disabled or re-enabled and some of its
-- pending deliveries may still have to be cancelled, parked or brought back; cleared by the worker
-- once none is left.
--
-- Constant defaults are stored in the catalog (PostgreSQL 11+): no table rewrite, no backfill;
-- the existing rows read `false` / NULL, which is what they are.

ALTER TABLE webhook_entregas
    ADD COLUMN estacionada boolean NOT NULL DEFAULT false,
    ADD COLUMN motivo text NULL;

ALTER TABLE webhook_urls ADD COLUMN entregas_por_acertar boolean NOT NULL DEFAULT false;
