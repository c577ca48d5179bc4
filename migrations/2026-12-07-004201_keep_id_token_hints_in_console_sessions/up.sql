-- RP-initiated sign-out (issue 38, part 1; OpenID Connect RP-Initiated Logout 1.0;
-- docs/console.md, "Signing out at the provider"): "Sair" on a session opened at the company's
-- identity provider sends the browser to the provider's `end_session_endpoint` with the
-- `id_token` it signed in with as `id_token_hint`. The token is kept with the session, on the
-- server only (never in a cookie), encrypted as webhook secrets are (AES-256-GCM with
-- `webhooks.encryption_key`): a dump alone does not hold the person's signed token. NULL for keys'
-- sessions and for the people's sessions opened before this migration (they sign out locally).
ALTER TABLE console_sessoes ADD COLUMN id_token_cifrado text NULL;
