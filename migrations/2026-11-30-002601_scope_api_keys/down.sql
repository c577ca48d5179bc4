ALTER TABLE api_keys DROP CONSTRAINT api_keys_escopos_check;
ALTER TABLE api_keys DROP COLUMN escopos;
