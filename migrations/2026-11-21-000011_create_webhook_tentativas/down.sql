DROP TABLE webhook_tentativas;
