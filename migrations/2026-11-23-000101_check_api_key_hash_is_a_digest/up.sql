-- `api_keys.hash` can only hold a digest (64 lower-case hex characters: SHA-256), so no code path
-- can ever store a key in clear there; `prefixo` is at most the 12 characters shown to operators.
ALTER TABLE api_keys
    ADD CONSTRAINT api_keys_hash_is_a_digest CHECK (hash ~ '^[0-9a-f]{64}$'),
    ADD CONSTRAINT api_keys_prefixo_is_short CHECK (char_length(prefixo) <= 12);
