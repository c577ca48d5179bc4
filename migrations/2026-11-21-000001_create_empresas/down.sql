DROP TABLE empresas;
