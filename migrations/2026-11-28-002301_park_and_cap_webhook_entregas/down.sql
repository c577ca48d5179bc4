SET lock_timeout = '5s';

ALTER TABLE webhook_urls DROP COLUMN entregas_por_acertar;

ALTER TABLE webhook_entregas
    DROP COLUMN motivo,
    DROP COLUMN estacionada;
