ALTER TABLE api_keys
    DROP CONSTRAINT api_keys_prefixo_is_short,
    DROP CONSTRAINT api_keys_hash_is_a_digest;
