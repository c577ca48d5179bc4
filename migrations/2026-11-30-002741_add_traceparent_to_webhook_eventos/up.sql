-- Traces (issue 25, part 4): the W3C traceparent of the change that wrote the event (telemetry
-- on; NULL otherwise), sent on each of its webhook deliveries so the attempt joins the change's
-- trace and a company can join it to its own. A nullable column without a default: a catalog
-- change, no table rewrite; the keys (empresa_id first) are untouched.
ALTER TABLE webhook_eventos ADD COLUMN traceparent text;
