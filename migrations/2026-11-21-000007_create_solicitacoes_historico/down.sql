DROP TABLE solicitacoes_historico;
