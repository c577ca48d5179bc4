-- The catch-up list (GET /api/eventos): a company's events oldest first, a keyset page at a
-- time ((criado_em, id) > cursor), with optional `desde` (criado_em >=) and `tipo` filters.
-- Without it the list reads every company's events.
CREATE INDEX webhook_eventos_empresa_criado_em_idx
    ON webhook_eventos (empresa_id, criado_em, id);
