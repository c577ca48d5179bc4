DROP TABLE webhook_entregas;
