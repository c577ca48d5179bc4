DROP TRIGGER empresas_agendar_sincronizacao ON empresas;
DROP FUNCTION agendar_sincronizacao_da_empresa();
DROP TABLE agenda_sincronizacao;
