DROP TABLE console_buscas;
