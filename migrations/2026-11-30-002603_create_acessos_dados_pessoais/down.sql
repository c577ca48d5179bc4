DROP TABLE acessos_dados_pessoais;
