DROP TABLE replicas_ativas;
