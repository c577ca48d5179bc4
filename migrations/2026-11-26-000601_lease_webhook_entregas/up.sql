-- The lease of a claimed delivery: a new token per claim. An attempt is recorded only by the
-- sender holding the token it claimed with, so a sender whose lease expired and was taken over
-- by another instance records nothing (the other's attempt is the one that counts). NULL when
-- no sender holds the delivery.
ALTER TABLE webhook_entregas ADD COLUMN token_reivindicacao uuid NULL;

-- "Which companies have deliveries due" (the fair claim visits each company's due deliveries
-- in turn, soonest first).
CREATE INDEX webhook_entregas_pendentes_empresa_idx
    ON webhook_entregas (empresa_id, proxima_tentativa_em)
    WHERE status = 'pendente';
