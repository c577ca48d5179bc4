-- The status checks' due times live in verificacoes_status (2026-11-28-002201): the consent
-- row's proximo_status_em is no longer read, and its index no longer worth its writes. (The column
-- stays for a rolling deploy: older processes still write it; a later migration can drop it.)
DROP INDEX CONCURRENTLY IF EXISTS solicitacoes_consentimento_status_devido_idx;
