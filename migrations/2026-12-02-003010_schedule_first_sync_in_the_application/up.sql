-- A new company's use-case synchronization is scheduled by the service, in the transaction that
-- inserts the company (crates/adapters/postgres/src/company_repository.rs, schedule_first_sync),
-- no longer by a trigger on `empresas` (issue 23, part 3): on a database distributed by company,
-- `empresas` is a reference table, and a trigger there writing a distributed table is refused.
-- A company inserted by hand (SQL) needs its row too:
--   INSERT INTO agenda_sincronizacao (empresa_id) VALUES ('<id>') ON CONFLICT DO NOTHING;
DROP TRIGGER IF EXISTS empresas_agendar_sincronizacao ON empresas;
-- (ban-drop-function: the function served only the trigger dropped above; nothing calls it)
-- squawk-ignore ban-drop-function
DROP FUNCTION IF EXISTS agendar_sincronizacao_da_empresa();
