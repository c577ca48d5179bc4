-- The checks of 2026-12-07-003770 hold for the rows stored before them too (they only widened the
-- sets). VALIDATE reads each table under a SHARE UPDATE EXCLUSIVE lock: reads and writes go on.
ALTER TABLE webhook_eventos VALIDATE CONSTRAINT webhook_eventos_tipo_check;
ALTER TABLE webhook_urls VALIDATE CONSTRAINT webhook_urls_eventos_check;
