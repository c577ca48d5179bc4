-- Webhook URL limits and control: one active registration per company and normalized URL
-- (enforced here, so two concurrent registrations cannot both win), and the instant a disabled
-- URL was re-enabled (the disabling check then judges it only on what happened after).

-- The URL compared for "the same URL" (`WebhookUrl::normalized`: scheme and host lower-cased,
-- default port and fragment dropped, an empty path as "/"), computed by the application. No URL
-- exists in production yet; rows stored before this migration get their URL as written, and
-- active duplicates among them beyond the oldest get a suffix ('#legado:' and their id) that no
-- normalized URL can have (it never keeps a fragment), so they stay until removed.
ALTER TABLE webhook_urls ADD COLUMN url_normalizada text NULL;
UPDATE webhook_urls SET url_normalizada = url;
UPDATE webhook_urls u SET url_normalizada = u.url || '#legado:' || u.id::text
WHERE u.removido_em IS NULL
  AND EXISTS (
      SELECT 1 FROM webhook_urls o
      WHERE o.empresa_id = u.empresa_id AND o.url = u.url AND o.removido_em IS NULL
        AND (o.criado_em, o.id) < (u.criado_em, u.id)
  );
ALTER TABLE webhook_urls ALTER COLUMN url_normalizada SET NOT NULL;

-- "The company's active registration of this URL": unique, so a second registration (even a
-- concurrent one) fails with a unique violation the adapter turns into a duplicate. Removed rows
-- are left out: a removed URL may be registered again.
CREATE UNIQUE INDEX webhook_urls_empresa_url_ativa_key
    ON webhook_urls (empresa_id, url_normalizada)
    WHERE removido_em IS NULL;

-- Set by `reativar`: deliveries that reached their final state before it do not count towards
-- disabling the URL again (else the next check would disable it at once on the old failures).
ALTER TABLE webhook_urls ADD COLUMN reativado_em timestamptz NULL;
