-- Issue 39: a URL is disabled when it has failed without a single success for
-- `webhooks.disable_after_seconds` since its first failure after its last success (test events
-- never count), not when one delivery in a window ran out of retries. The sender keeps, per URL,
-- the instant of that first failure (cleared by a success, by `reativar`), and the disabling keeps
-- it with the reason, so the company can be told why and since when. Nullable columns without a
-- default: a catalogue change only, no row rewritten.
ALTER TABLE webhook_urls ADD COLUMN falhando_desde timestamptz NULL;
ALTER TABLE webhook_urls ADD COLUMN motivo_desativacao text NULL;
