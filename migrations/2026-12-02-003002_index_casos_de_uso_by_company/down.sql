DROP INDEX CONCURRENTLY IF EXISTS casos_de_uso_empresa_id_id_key;
