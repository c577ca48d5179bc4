DROP TABLE pgcc_transicoes;
DROP TABLE pgcc_saude;
DROP TABLE pgcc_chamadas;
