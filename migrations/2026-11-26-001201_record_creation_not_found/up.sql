-- When the PGCC first answered the reconciler that it holds no request under our id. A PGCC may
-- commit a creation after our call to it gave up (a timeout, a 429, a 5xx), so one "not found"
-- does not cancel: the reconciler cancels only when a later "not found" comes at least
-- workers.reconcile_not_found_seconds after this one; a "found" meanwhile confirms as before.
-- NULL while no "not found" was seen since the last attempt (a new attempt forgets it).
ALTER TABLE solicitacoes_consentimento ADD COLUMN criacao_nao_encontrada_em timestamptz NULL;
