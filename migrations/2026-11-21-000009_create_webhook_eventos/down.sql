DROP TABLE webhook_eventos;
