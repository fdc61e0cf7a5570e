// A real OpenID provider for the test suite: npm's oidc-provider (OpenID-certified) on loopback.
//
// Usage: node tests/controlplane/auth/oidc/provider.mjs CONFIG.json
// CONFIG: { port, signingKey (private JWK), clients: [...], users: {id: {password, name, email,
//           groups, entitlements}}, resources: {indicator: "scope list"}, defaultResource }
// Prints one line `ready <issuer>` on stdout once it listens.
//
// Sign-in is a minimal HTML form (login + password) that a browser or a plain HTTP client can
// submit. Consent is granted automatically (a first-party client) but only for what the user is
// entitled to: a scope listed in CONFIG.restrictedScopes is granted only to users whose
// `entitlements` name it — so the platform's admin scope is really granted or refused here.
// Clients that use a resource indicator (RFC 8707) get RFC 9068 JWT access tokens for it, which
// carry the user's `groups` as an extra claim.
import { readFileSync } from 'node:fs';
import * as http from 'node:http';

import Provider, { errors } from 'oidc-provider';

const config = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const issuer = `http://127.0.0.1:${config.port}`;
const restricted = new Set(config.restrictedScopes || []);
const users = config.users;

const entitled = (accountId, scope) => !restricted.has(scope) || (users[accountId]?.entitlements || []).includes(scope);

const provider = new Provider(issuer, {
  clients: config.clients,
  jwks: { keys: [config.signingKey] },
  cookies: { keys: ['test-cookie-key-0123456789abcdef'] },
  // offline_access: refresh tokens for native clients allowed the refresh_token grant (cpctl).
  scopes: ['openid', 'profile', 'email', 'groups', 'offline_access', ...restricted],
  claims: { openid: ['sub'], profile: ['name'], email: ['email'], groups: ['groups'] },
  pkce: { required: () => true },
  features: {
    devInteractions: { enabled: false },
    resourceIndicators: {
      enabled: true,
      defaultResource: async (ctx, client, oneOf) => oneOf || (client.clientId === config.resourceClient ? config.defaultResource : undefined),
      useGrantedResource: async () => true,
      getResourceServerInfo: async (ctx, indicator) => {
        if (!(indicator in config.resources)) throw new errors.InvalidTarget();
        return {
          scope: config.resources[indicator],
          audience: indicator,
          accessTokenTTL: 600,
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: 'RS256' } },
        };
      },
    },
  },
  extraTokenClaims: async (ctx, token) => {
    if (token.kind === 'AccessToken' && users[token.accountId]) return { groups: users[token.accountId].groups };
    return undefined;
  },
  findAccount: async (ctx, id) => {
    const user = users[id];
    if (!user) return undefined;
    return {
      accountId: id,
      claims: async () => ({ sub: id, name: user.name, email: user.email, groups: user.groups }),
    };
  },
  ttl: {
    IdToken: config.idTokenTTL || 3600,
    AccessToken: 600,
    Interaction: 600,
    Session: 3600,
    Grant: 3600,
  },
  renderError: async (ctx, out) => {
    ctx.type = 'text/plain';
    ctx.body = `provider error: ${out.error}: ${out.error_description || ''}`;
  },
});
provider.proxy = false;

const escape = (s) => String(s).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function loginPage(res, uid, message = '') {
  res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store' });
  res.end(`<!doctype html><html><head><title>Test provider sign-in</title></head><body>
<h1>Sign in to the test provider</h1>
${message ? `<p id="error">${escape(message)}</p>` : ''}
<form method="post" action="/interaction/${escape(uid)}/login">
  <label>Login <input name="login" id="login" autocomplete="off"></label>
  <label>Password <input name="password" id="password" type="password"></label>
  <button type="submit" id="submit">Sign in</button>
</form></body></html>`);
}

async function readForm(req) {
  let body = '';
  for await (const chunk of req) {
    body += chunk;
    if (body.length > 10000) throw new Error('form too large');
  }
  return new URLSearchParams(body);
}

async function interaction(req, res, uid, action) {
  const details = await provider.interactionDetails(req, res);
  const { prompt, params, session } = details;
  if (prompt.name === 'login') {
    if (action !== 'login') return loginPage(res, uid);
    const form = await readForm(req);
    const user = users[form.get('login')];
    if (!user || user.password !== form.get('password')) return loginPage(res, uid, 'Unknown login or wrong password.');
    return provider.interactionFinished(req, res, { login: { accountId: form.get('login') } }, { mergeWithLastSubmission: false });
  }
  if (prompt.name === 'consent') {
    const accountId = session.accountId;
    const grant = details.grantId
      ? await provider.Grant.find(details.grantId)
      : new provider.Grant({ accountId, clientId: params.client_id });
    const { missingOIDCScope, missingOIDCClaims, missingResourceScopes } = prompt.details;
    const split = (scopes) => [scopes.filter((s) => entitled(accountId, s)), scopes.filter((s) => !entitled(accountId, s))];
    if (missingOIDCScope) {
      const [granted, refused] = split(missingOIDCScope);
      grant.addOIDCScope(granted.join(' '));
      grant.rejectOIDCScope(refused.join(' '));
    }
    if (missingOIDCClaims) grant.addOIDCClaims(missingOIDCClaims);
    for (const [indicator, scopes] of Object.entries(missingResourceScopes || {})) {
      const [granted, refused] = split(scopes);
      grant.addResourceScope(indicator, granted.join(' '));
      grant.rejectResourceScope(indicator, refused.join(' '));
    }
    const grantId = await grant.save();
    return provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
  }
  res.writeHead(501);
  res.end(`interaction ${prompt.name} not implemented`);
}

const callback = provider.callback();
const server = http.createServer((req, res) => {
  const match = /^\/interaction\/([\w-]+)(?:\/(login))?$/.exec(new URL(req.url, issuer).pathname);
  if (!match) return callback(req, res);
  return interaction(req, res, match[1], match[2]).catch((err) => {
    res.writeHead(400, { 'Content-Type': 'text/plain' });
    res.end(`interaction failed: ${err.message}`);
  });
});
server.listen(config.port, '127.0.0.1', () => {
  process.stdout.write(`ready ${issuer}\n`);
});
for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, () => server.close(() => process.exit(0)));
