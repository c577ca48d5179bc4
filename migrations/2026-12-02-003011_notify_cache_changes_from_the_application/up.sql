-- The caches' change feed is notified by the service, in the transaction that writes a company's
-- use cases or API keys (crates/adapters/postgres/src/change_feed.rs, announce_change), no longer
-- by triggers (issue 23, part 3): on a database distributed by company, `casos_de_uso` is
-- distributed and `api_keys` and `empresas` are reference tables, where a trigger that sends
-- NOTIFY runs on the workers, whose notifications the coordinator's listeners never hear.
-- A change made by hand (SQL) to these tables tells the caches itself, in its transaction:
--   SELECT pg_notify('consent_api_cache', '<empresa id>');   -- or '*' for every company
-- (docs/operations.md, "Caches").
DROP TRIGGER IF EXISTS casos_de_uso_notificar_cache ON casos_de_uso;
DROP TRIGGER IF EXISTS casos_de_uso_notificar_cache_truncate ON casos_de_uso;
DROP TRIGGER IF EXISTS api_keys_notificar_cache ON api_keys;
DROP TRIGGER IF EXISTS api_keys_notificar_cache_emissao ON api_keys;
DROP TRIGGER IF EXISTS api_keys_notificar_cache_ultimo_uso ON api_keys;
DROP TRIGGER IF EXISTS api_keys_notificar_cache_truncate ON api_keys;
DROP TRIGGER IF EXISTS empresas_notificar_cache ON empresas;
DROP TRIGGER IF EXISTS empresas_notificar_cache_truncate ON empresas;
-- (ban-drop-function: these functions served only the triggers dropped above; nothing calls them)
-- squawk-ignore ban-drop-function
DROP FUNCTION IF EXISTS notificar_cache_da_empresa();
-- squawk-ignore ban-drop-function
DROP FUNCTION IF EXISTS notificar_cache_da_propria_empresa();
-- squawk-ignore ban-drop-function
DROP FUNCTION IF EXISTS notificar_cache_inteiro();
