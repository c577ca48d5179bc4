-- Since when the PGCC has answered, for this request, a status we do not know (NULL: it has not,
-- or answered a known one since). The status poller skips such a request alone and pushes its
-- next check back, longer as the oddity lasts (its backoff is measured from this instant).
ALTER TABLE solicitacoes_consentimento ADD COLUMN status_desconhecido_desde timestamptz NULL;
