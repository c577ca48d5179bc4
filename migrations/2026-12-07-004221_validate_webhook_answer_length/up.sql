-- The length check of migration 2026-12-07-004220, validated apart (SHARE UPDATE EXCLUSIVE:
-- reads and writes go on while it scans; every row is NULL or written by the sender, which cuts
-- at 2,000 characters).
ALTER TABLE webhook_tentativas VALIDATE CONSTRAINT webhook_tentativas_corpo_resposta_check;
