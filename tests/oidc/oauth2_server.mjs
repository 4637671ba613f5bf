// The OAuth 2.0 authorization server the OAuth2 credential tests start on 127.0.0.1
// (tests/agents/test_oauth2.py): panva's oidc-provider, the package pinned in
// package.json, with its standard authorization-code and refresh-token grants.
// Only its pages for a person are replaced: the account OAUTH2_ACCOUNT signs in and
// consents to what the client asks at once, so a test plays the browser by
// following redirects.
//
// Environment:
//   OAUTH2_PORT     the port on 127.0.0.1 (the issuer is http://127.0.0.1:<port>)
//   OAUTH2_CLIENT   JSON: {"client_id", "client_secret", "redirect_uris": [...]}
//   OAUTH2_ACCOUNT  who signs in
//
// It prints "ready <issuer>" once it listens.
import crypto from 'node:crypto';
import http from 'node:http';

import Provider from 'oidc-provider';

const port = Number(process.env.OAUTH2_PORT);
const issuer = `http://127.0.0.1:${port}`;
const client = JSON.parse(process.env.OAUTH2_CLIENT);
const account = process.env.OAUTH2_ACCOUNT;

function signingKey() {
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
  features: { devInteractions: { enabled: false } },
  interactions: { url: (ctx, interaction) => `/interaction/${interaction.uid}` },
  async findAccount(ctx, id) {
    return { accountId: id, claims: async () => ({ sub: id }) };
  },
});

// The library's documented interaction recipe, with no form: sign in, then grant
// every scope and claim the client asked for.
async function interaction(req, res) {
  const details = await provider.interactionDetails(req, res);
  if (details.prompt.name === 'login') {
    await provider.interactionFinished(
      req, res, { login: { accountId: account } }, { mergeWithLastSubmission: false },
    );
    return;
  }
  const grant = details.grantId
    ? await provider.Grant.find(details.grantId)
    : new provider.Grant({ accountId: details.session.accountId, clientId: details.params.client_id });
  const missing = details.prompt.details;
  if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
  if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
  for (const [resource, scopes] of Object.entries(missing.missingResourceScopes || {})) {
    grant.addResourceScope(resource, scopes.join(' '));
  }
  const grantId = await grant.save();
  await provider.interactionFinished(
    req, res, { consent: { grantId } }, { mergeWithLastSubmission: true },
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
