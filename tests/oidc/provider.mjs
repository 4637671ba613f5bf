// The OpenID Connect provider Toolcrib's sign-in tests start on 127.0.0.1: panva's
// oidc-provider (an OpenID Certified implementation; pinned in package.json), with a
// login page of its own in place of the library's development pages, and accounts
// read from a JSON file at every sign-in, so a test changes a user's groups between
// two sign-ins by rewriting the file.
//
// It is also the authorization server of the tool gateway's OAuth tests
// (tests/toolsets/gateway/test_oauth.py): MCP clients register themselves (dynamic
// client registration, open), sign the user in, ask her consent on a page of its own,
// and use PKCE (required of every client, Toolcrib's sign-in included); an access
// token asked for a resource of OIDC_RESOURCES (RFC 8707) is a JWT (RFC 9068) whose
// audience is that resource. Toolcrib's own client (OIDC_CLIENT) is first-party:
// no consent page.
//
// Environment:
//   OIDC_PORT        the port on 127.0.0.1 (the issuer is http://127.0.0.1:<port>)
//   OIDC_CLIENT      JSON: {"client_id", "client_secret", "redirect_uris": [...]}
//   OIDC_ACCOUNTS    a JSON file: {"<login>": {"password": "...", "claims": {...}}}
//   OIDC_RESOURCES   optional JSON: {"<resource indicator>": {"scope": "a b",
//                    "audience"?: "...", "ttl"?: seconds}}; any other resource is
//                    refused (invalid_target)
//   OIDC_SIGNING_KEY optional: the private JWK that signs (generated otherwise)
//
//   OIDC_NEXT_ID_TOKEN optional: a file path; when the file exists, the next token
//                    response carries its content as the ID token (then it is
//                    deleted), so a test sends Toolcrib an ID token of its making
//
// Toolcrib's client holds a refresh token from its sign-in, as a confidential
// client does at Keycloak; an account removed from OIDC_ACCOUNTS makes it invalid
// (invalid_grant), and its userinfo answer reads the file afresh.
//
// It prints "ready <issuer>" once it listens.
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';

import Provider, { errors } from 'oidc-provider';

const port = Number(process.env.OIDC_PORT);
const issuer = `http://127.0.0.1:${port}`;
const client = JSON.parse(process.env.OIDC_CLIENT);
const accountsFile = process.env.OIDC_ACCOUNTS;
const resources = JSON.parse(process.env.OIDC_RESOURCES || '{}');
const nextIdTokenFile = process.env.OIDC_NEXT_ID_TOKEN;
const resourceScopes = Object.values(resources).flatMap(({ scope }) => scope.split(' '));
const SCOPES = 'openid email profile groups';

function accounts() {
  return JSON.parse(fs.readFileSync(accountsFile, 'utf8'));
}

function signingKey() {
  if (process.env.OIDC_SIGNING_KEY) return JSON.parse(process.env.OIDC_SIGNING_KEY);
  const { privateKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
  return { ...privateKey.export({ format: 'jwk' }), kid: 'test', use: 'sig', alg: 'RS256' };
}

const provider = new Provider(issuer, {
  clients: [
    {
      ...client,
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_basic',
    },
  ],
  jwks: { keys: [signingKey()] },
  cookies: { keys: [crypto.randomBytes(32).toString('hex')] },
  // offline_access: a registered client may hold a refresh token; the resources'
  // scopes, so that a client registers with them (its scope metadata).
  scopes: [...new Set([...SCOPES.split(' '), 'offline_access', ...resourceScopes])],
  claims: {
    openid: ['sub'],
    email: ['email', 'email_verified'],
    profile: ['name', 'given_name', 'family_name', 'preferred_username'],
    groups: ['groups'],
  },
  features: {
    devInteractions: { enabled: false },
    registration: { enabled: true },
    resourceIndicators: {
      enabled: true,
      async getResourceServerInfo(ctx, indicator) {
        const server = resources[indicator];
        if (!server) throw new errors.InvalidTarget();
        return {
          scope: server.scope,
          audience: server.audience || indicator,
          accessTokenTTL: server.ttl || 3600,
          accessTokenFormat: 'jwt',
        };
      },
    },
  },
  pkce: { required: () => true },
  // The library's default wants offline_access (and a consent prompt); Toolcrib's
  // confidential client gets one at every sign-in, as at Keycloak.
  async issueRefreshToken(ctx, oidcClient, code) {
    if (!oidcClient.grantTypeAllowed('refresh_token')) return false;
    return oidcClient.clientId === client.client_id || code.scopes.has('offline_access');
  },
  interactions: { url: (ctx, interaction) => `/interaction/${interaction.uid}` },
  async findAccount(ctx, id) {
    const account = accounts()[id];
    if (!account) return undefined;
    return { accountId: id, claims: async () => ({ sub: id, ...account.claims }) };
  },
  // Toolcrib's client is first-party: no consent screen (the library's documented
  // recipe). A registered client asks the user (consentPage below).
  async loadExistingGrant(ctx) {
    const grantId = ctx.oidc.result?.consent?.grantId
      || ctx.oidc.session.grantIdFor(ctx.oidc.client.clientId);
    if (grantId) return ctx.oidc.provider.Grant.find(grantId);
    if (ctx.oidc.client.clientId !== client.client_id) return undefined;
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

function consentPage(uid, details) {
  const scopes = [
    ...(details.missingOIDCScope || []),
    ...Object.values(details.missingResourceScopes || {}).flat(),
  ];
  const resourcesAsked = Object.keys(details.missingResourceScopes || {});
  return `<!doctype html><html lang="en"><head><meta charset="utf-8">
<title>Test identity provider</title></head><body>
<h1>Allow access?</h1>
<p>The client ${details.clientId} asks for: ${scopes.join(' ')}</p>
<p>At: ${resourcesAsked.join(' ')}</p>
<form method="post" action="/interaction/${uid}/confirm">
<button type="submit">Allow</button></form></body></html>`;
}

// The library's documented consent recipe: grant what the client asked for.
async function consent(req, res, details) {
  const { prompt: { details: missing }, params, session, grantId } = details;
  const grant = grantId
    ? await provider.Grant.find(grantId)
    : new provider.Grant({ accountId: session.accountId, clientId: params.client_id });
  if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
  if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
  for (const [indicator, scope] of Object.entries(missing.missingResourceScopes || {})) {
    grant.addResourceScope(indicator, scope.join(' '));
  }
  const result = { consent: { grantId: await grant.save() } };
  await provider.interactionFinished(req, res, result, { mergeWithLastSubmission: true });
}

async function readForm(req) {
  let body = '';
  for await (const chunk of req) body += chunk;
  return new URLSearchParams(body);
}

async function interaction(req, res) {
  const details = await provider.interactionDetails(req, res);
  const asksConsent = details.prompt.name === 'consent';
  if (req.method === 'GET') {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    const missing = { clientId: details.params.client_id, ...details.prompt.details };
    res.end(asksConsent ? consentPage(details.uid, missing) : loginPage(details.uid));
    return;
  }
  if (asksConsent) {
    await consent(req, res, details);
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

// The library answers an unexpected error with "oops": its log says what it was.
provider.on('server_error', (ctx, error) => console.error('server_error', error));

// A test's own ID token in place of the next one the token endpoint issues.
provider.use(async (ctx, next) => {
  await next();
  if (ctx.path !== '/token' || ctx.status !== 200 || !nextIdTokenFile) return;
  if (!fs.existsSync(nextIdTokenFile)) return;
  const idToken = fs.readFileSync(nextIdTokenFile, 'utf8').trim();
  fs.unlinkSync(nextIdTokenFile);
  ctx.body = { ...ctx.body, id_token: idToken };
});

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
