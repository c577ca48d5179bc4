ALTER TABLE replicas_ativas DROP COLUMN atendeu_em;
