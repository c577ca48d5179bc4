// A real OpenID Provider for the console's sign-in tests (issue 38, part 1): npm's oidc-provider
// (panva's, OpenID Certified), pinned and installed under target/ by tests/oidc/install.sh.
//
//   node tests/oidc/provider.mjs '<json config>'
//
// The config: {"modules": "<dir holding node_modules/oidc-provider>", "client_id", "client_secret",
// "redirect_uris": [...], "users": {"<sub>": {"email": "...", "roles": ["dpo"]}}}, and optionally
// "post_logout_redirect_uris": [...] (the console's client: where RP-initiated logout may send the
// browser back), "clients": [{"client_id", "client_secret", "redirect_uris"}] (other clients of
// the same provider, e.g. another application's: their id_tokens have another audience), and
// "issuer": the issuer's URL when the provider is reached through a relay the test controls
// (tests/src/http_relay.rs) rather than at its own address.
// Listens on 127.0.0.1, on a free port, and prints `oidc-provider listening on <its address>` once
// ready. Standard input: one JSON object a line; {"sub": "...", "roles": [...]} changes a user's
// roles at the provider (what its administrator would do); {"id_token_ttl": <seconds>} sets the
// lifetime of the id_tokens issued from then on (negative: already expired when issued, as a
// token held back that long would be). When it closes, the process exits (so a test that dies
// leaves nothing running).
//
// No login form: the interaction URL `/interaction/<uid>?login=<sub>` signs in that user (a test
// drives the flow over HTTP, following the redirects itself); consent is implied (a grant of the
// scopes asked is made for the console's client). The id_token carries the scopes' claims
// (`conformIdTokenClaims: false`): `email` and the roles claim `roles` (scope `roles`). It is
// signed RS256 with a key generated at start (its kid in the JWKS).
import http from 'node:http';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { generateKeyPairSync, randomUUID } from 'node:crypto';

const config = JSON.parse(process.argv[2]);
const { default: Provider } = await import(
  pathToFileURL(path.join(config.modules, 'node_modules/oidc-provider/lib/index.js')).href
);

const users = new Map(Object.entries(config.users));

const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const jwk = { ...privateKey.export({ format: 'jwk' }), kid: randomUUID(), use: 'sig', alg: 'RS256' };

const server = http.createServer();
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const address = `http://127.0.0.1:${server.address().port}`;
const issuer = config.issuer || address;

// the id_tokens' lifetime, changed through stdin (the library's default is an hour)
let idTokenTtl = 3600;

const client = (c) => ({
  client_id: c.client_id,
  client_secret: c.client_secret,
  redirect_uris: c.redirect_uris,
  post_logout_redirect_uris: c.post_logout_redirect_uris || [],
  grant_types: ['authorization_code'],
  response_types: ['code'],
  token_endpoint_auth_method: 'client_secret_basic',
});

const provider = new Provider(issuer, {
  clients: [client(config), ...(config.clients || []).map(client)],
  ttl: { IdToken: () => idTokenTtl },
  jwks: { keys: [jwk] },
  cookies: { keys: [randomUUID()] },
  scopes: ['openid', 'email', 'roles'],
  claims: { openid: ['sub'], email: ['email', 'email_verified'], roles: ['roles'] },
  conformIdTokenClaims: false,
  features: {
    devInteractions: { enabled: false },
    // RP-initiated logout (on by default): its confirmation page, plain (the library's own loads
    // a web font from the Internet)
    rpInitiatedLogout: {
      enabled: true,
      async logoutSource(ctx, form) {
        ctx.body = `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">
<title>Sign out</title></head><body><main><h1>Sign out of the identity provider?</h1>${form}
<button autofocus type="submit" form="op.logoutForm" value="yes" name="logout">Yes, sign me out</button>
<button type="submit" form="op.logoutForm">No, stay signed in</button></main></body></html>`;
      },
    },
  },
  interactions: { url: (ctx, interaction) => `/interaction/${interaction.uid}` },
  async findAccount(ctx, sub) {
    if (!users.has(sub)) return undefined;
    return {
      accountId: sub,
      // read at every token: a role changed at the provider shows in the next id_token
      async claims() {
        const user = users.get(sub);
        return { sub, email: user.email, email_verified: true, roles: user.roles };
      },
    };
  },
  async loadExistingGrant(ctx) {
    // consent implied: the client's grant holds every scope and claim it asks for
    const grantId = ctx.oidc.result?.consent?.grantId
      || ctx.oidc.session.grantIdFor(ctx.oidc.client.clientId);
    if (grantId) {
      const grant = await ctx.oidc.provider.Grant.find(grantId);
      if (grant) return grant;
    }
    const grant = new ctx.oidc.provider.Grant({
      clientId: ctx.oidc.client.clientId,
      accountId: ctx.oidc.session.accountId,
    });
    grant.addOIDCScope('openid email roles');
    await grant.save();
    return grant;
  },
});

server.on('request', async (req, res) => {
  const url = new URL(req.url, issuer);
  if (url.pathname.startsWith('/interaction/')) {
    try {
      const sub = url.searchParams.get('login');
      if (!sub || !users.has(sub)) {
        res.writeHead(400, { 'content-type': 'text/plain' }).end('unknown user');
        return;
      }
      await provider.interactionDetails(req, res);
      await provider.interactionFinished(req, res, { login: { accountId: sub } }, {
        mergeWithLastSubmission: false,
      });
    } catch (e) {
      res.writeHead(400, { 'content-type': 'text/plain' }).end(String(e));
    }
    return;
  }
  provider.callback()(req, res);
});

let pending = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => {
  pending += chunk;
  let at;
  while ((at = pending.indexOf('\n')) >= 0) {
    const line = pending.slice(0, at).trim();
    pending = pending.slice(at + 1);
    if (!line) continue;
    const change = JSON.parse(line);
    if ('id_token_ttl' in change) {
      idTokenTtl = change.id_token_ttl;
      process.stdout.write(`id_token_ttl: ${idTokenTtl}\n`);
      continue;
    }
    const user = users.get(change.sub);
    if (user) user.roles = change.roles;
    process.stdout.write(`roles of ${change.sub}: ${JSON.stringify(change.roles)}\n`);
  }
});
process.stdin.on('end', () => process.exit(0));

process.stdout.write(`oidc-provider listening on ${address}\n`);
