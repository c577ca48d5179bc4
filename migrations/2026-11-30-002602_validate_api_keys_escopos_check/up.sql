-- The scopes' check (added NOT VALID by 2026-11-30-002601) holds for the keys stored before it
-- too (they all read the default). VALIDATE takes a SHARE UPDATE EXCLUSIVE lock: reads and writes
-- go on.
ALTER TABLE api_keys VALIDATE CONSTRAINT api_keys_escopos_check;
