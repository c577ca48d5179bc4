ALTER TABLE webhook_eventos DROP COLUMN IF EXISTS traceparent;
