-- Webhook URLs: the signing secret (encrypted at rest by the application's SecretCipher, never
-- plaintext), the previous secret while a rotation overlap lasts, and the automatic disabling of
-- URLs whose deliveries all fail.

-- No URL exists in production yet. Any row created before this migration gets the placeholder
-- 'legado:sem-segredo', which is not a ciphertext of any key: decrypting it fails, so nothing
-- is ever signed with it; rotating the secret gives the URL a real one.
ALTER TABLE webhook_urls ADD COLUMN segredo_cifrado text NULL;
UPDATE webhook_urls SET segredo_cifrado = 'legado:sem-segredo';
ALTER TABLE webhook_urls ALTER COLUMN segredo_cifrado SET NOT NULL;

-- The secret replaced by the last rotation, still signing (alongside) until segredo_anterior_ate.
ALTER TABLE webhook_urls ADD COLUMN segredo_anterior_cifrado text NULL;
ALTER TABLE webhook_urls ADD COLUMN segredo_anterior_ate timestamptz NULL;
ALTER TABLE webhook_urls ADD CONSTRAINT webhook_urls_segredo_anterior_check
    CHECK ((segredo_anterior_cifrado IS NULL) = (segredo_anterior_ate IS NULL));

-- Set when every delivery to the URL failed for the configured window: no new deliveries.
ALTER TABLE webhook_urls ADD COLUMN desativado_em timestamptz NULL;
