// The OpenID Connect provider Toolcrib's sign-in tests start on 127.0.0.1: panva's
// oidc-provider (an OpenID Certified implementation; pinned in package.json), with a
// login page of its own in place of the library's development pages, and accounts
// read from a JSON file at every sign-in, so a test changes a user's groups between
// two sign-ins by rewriting the file.
//
// Environment:
//   OIDC_PORT      the port on 127.0.0.1 (the issuer is http://127.0.0.1:<port>)
//   OIDC_CLIENT    JSON: {"client_id", "client_secret", "redirect_uris": [...]}
//   OIDC_ACCOUNTS  a JSON file: {"<login>": {"password": "...", "claims": {...}}}
//
// It prints "ready <issuer>" once it listens.
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';

import Provider from 'oidc-provider';

const port = Number(process.env.OIDC_PORT);
const issuer = `http://127.0.0.1:${port}`;
const client = JSON.parse(process.env.OIDC_CLIENT);
const accountsFile = process.env.OIDC_ACCOUNTS;
const SCOPES = 'openid email profile groups';

function accounts() {
  return JSON.parse(fs.readFileSync(accountsFile, 'utf8'));
}

function signingKey() {
  const { privateKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
  return { ...privateKey.export({ format: 'jwk' }), kid: 'test', use: 'sig', alg: 'RS256' };
}

const provider = new Provider(issuer, {
  clients: [
    {
      ...client,
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_basic',
    },
  ],
  jwks: { keys: [signingKey()] },
  cookies: { keys: [crypto.randomBytes(32).toString('hex')] },
  scopes: SCOPES.split(' '),
  claims: {
    openid: ['sub'],
    email: ['email', 'email_verified'],
    profile: ['name', 'given_name', 'family_name', 'preferred_username'],
    groups: ['groups'],
  },
  features: { devInteractions: { enabled: false } },
  interactions: { url: (ctx, interaction) => `/interaction/${interaction.uid}` },
  async findAccount(ctx, id) {
    const account = accounts()[id];
    if (!account) return undefined;
    return { accountId: id, claims: async () => ({ sub: id, ...account.claims }) };
  },
  // A first-party client: no consent screen (the library's documented recipe).
  async loadExistingGrant(ctx) {
    const grantId = ctx.oidc.result?.consent?.grantId
      || ctx.oidc.session.grantIdFor(ctx.oidc.client.clientId);
    if (grantId) return ctx.oidc.provider.Grant.find(grantId);
    const grant = new ctx.oidc.provider.Grant({
      clientId: ctx.oidc.client.clientId,
      accountId: ctx.oidc.session.accountId,
    });
    grant.addOIDCScope(SCOPES);
    await grant.save();
    return grant;
  },
});

function loginPage(uid, error) {
  const alert = error ? `<p role="alert">${error}</p>` : '';
  return `<!doctype html><html lang="en"><head><meta charset="utf-8">
<title>Test identity provider</title></head><body>
<h1>Test identity provider</h1>${alert}
<form method="post" action="/interaction/${uid}/login">
<label>Login <input name="login" id="login" required autofocus></label>
<label>Password <input name="password" id="password" type="password" required></label>
<button type="submit">Sign in</button></form></body></html>`;
}

async function readForm(req) {
  let body = '';
  for await (const chunk of req) body += chunk;
  return new URLSearchParams(body);
}

async function interaction(req, res) {
  const details = await provider.interactionDetails(req, res);
  if (req.method === 'GET') {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(loginPage(details.uid));
    return;
  }
  const form = await readForm(req);
  const login = form.get('login') || '';
  const account = accounts()[login];
  if (!account || account.password !== form.get('password')) {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(loginPage(details.uid, 'Wrong login or password.'));
    return;
  }
  await provider.interactionFinished(
    req,
    res,
    { login: { accountId: login } },
    { mergeWithLastSubmission: false },
  );
}

const handle = provider.callback();
const server = http.createServer((req, res) => {
  if (req.url.startsWith('/interaction/')) {
    interaction(req, res).catch((error) => {
      res.writeHead(400, { 'content-type': 'text/plain' });
      res.end(String(error));
    });
    return;
  }
  handle(req, res);
});
server.listen(port, '127.0.0.1', () => {
  process.stdout.write(`ready ${issuer}\n`);
});
