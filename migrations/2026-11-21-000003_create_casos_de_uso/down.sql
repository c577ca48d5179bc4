DROP TABLE casos_de_uso;
