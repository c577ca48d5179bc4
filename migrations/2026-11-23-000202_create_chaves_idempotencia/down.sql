DROP TABLE chaves_idempotencia;
