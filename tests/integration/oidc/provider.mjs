// A real OpenID provider (oidc-provider) on loopback for mcp-exec's identity
// tests: client_credentials with resource indicators, JWT access tokens for
// the resource URI given.  Test-only endpoints under /_test/ mint the bad
// tokens a provider would never issue, and rotate the signing key.
// Usage: node provider.mjs PORTFILE RESOURCE
import http from 'node:http';
import fs from 'node:fs';
import Provider from 'oidc-provider';
import * as jose from 'jose';

const [portfile, RESOURCE] = process.argv.slice(2);
const CLIENT = { client_id: 'mcp-client', client_secret: 'mcp-secret' };
let issuer = '';
let key;            // the private JWK the provider signs with now
let provider;

async function newKey() {
  const { privateKey } = await jose.generateKeyPair('RS256', { extractable: true });
  const jwk = await jose.exportJWK(privateKey);
  jwk.kid = `k-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`;
  jwk.alg = 'RS256';
  jwk.use = 'sig';
  return jwk;
}

function makeProvider() {
  const p = new Provider(issuer, {
    clients: [{
      ...CLIENT, grant_types: ['client_credentials'], redirect_uris: [],
      response_types: [], token_endpoint_auth_method: 'client_secret_post',
      scope: 'mcp:tools other',
    }, {
      // The SDK's ClientCredentialsProvider authenticates with HTTP Basic.
      client_id: 'sdk-client', client_secret: 'sdk-secret',
      grant_types: ['client_credentials'], redirect_uris: [],
      response_types: [], token_endpoint_auth_method: 'client_secret_basic',
      scope: 'mcp:tools',
    }],
    jwks: { keys: [key] },
    scopes: ['mcp:tools', 'other'],
    ttl: { ClientCredentials: 300 },
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => RESOURCE,
        useGrantedResource: () => true,
        getResourceServerInfo: (ctx, resource) => ({
          scope: 'mcp:tools other', audience: resource,
          accessTokenTTL: 300, accessTokenFormat: 'jwt',
          jwt: { sign: { alg: 'RS256' } },
        }),
      },
    },
  });
  p.proxy = false;
  return p;
}

const b64 = (o) => Buffer.from(JSON.stringify(o)).toString('base64url');

// Tokens no provider would issue: each signed (or not) to test one check.
async function mint(kind) {
  const now = Math.floor(Date.now() / 1000);
  const claims = { iss: issuer, sub: 'mcp-client', aud: RESOURCE,
    client_id: 'mcp-client', scope: 'mcp:tools', iat: now, exp: now + 300,
    jti: `j-${Math.random()}` };
  const priv = await jose.importJWK(key, 'RS256');
  const sign = (c, kid = key.kid, k = priv) =>
    new jose.SignJWT(c).setProtectedHeader({ alg: 'RS256', kid, typ: 'at+jwt' }).sign(k);
  switch (kind) {
  case 'good': return sign(claims);
  case 'expired': return sign({ ...claims, iat: now - 4000, exp: now - 3600 });
  case 'notyet': return sign({ ...claims, nbf: now + 3600 });
  case 'issuer': return sign({ ...claims, iss: 'http://127.0.0.1:1/other' });
  case 'audience': return sign({ ...claims, aud: 'http://127.0.0.1:1/mcp' });
  case 'noscope': return sign({ ...claims, scope: 'other' });
  case 'kid': {
    const other = await jose.importJWK(await newKey(), 'RS256');
    return sign(claims, 'k-unknown', other);
  }
  case 'none': return `${b64({ alg: 'none', typ: 'JWT' })}.${b64(claims)}.`;
  case 'hs256': {
    // The confused-deputy attack: HMAC keyed with the public key's PEM.
    const pub = await jose.importJWK({ kty: key.kty, n: key.n, e: key.e }, 'RS256');
    const pem = await jose.exportSPKI(pub);
    return new jose.SignJWT(claims).setProtectedHeader({ alg: 'HS256', kid: key.kid })
      .sign(new TextEncoder().encode(pem));
  }
  case 'groups': return sign({ ...claims, groups: ['analysts', 'ops'] });
  default: throw new Error(`unknown kind ${kind}`);
  }
}

const server = http.createServer(async (req, res) => {
  const url = new URL(req.url, issuer);
  try {
    if (url.pathname === '/_test/mint') {
      res.end(await mint(url.searchParams.get('kind')));
    } else if (url.pathname === '/_test/rotate') {
      key = await newKey();
      provider = makeProvider();
      res.end(key.kid);
    } else {
      provider.callback()(req, res);
    }
  } catch (e) {
    res.statusCode = 500;
    res.end(String(e));
  }
});
server.listen(0, '127.0.0.1', async () => {
  issuer = `http://127.0.0.1:${server.address().port}`;
  key = await newKey();
  provider = makeProvider();
  fs.writeFileSync(`${portfile}.tmp`, String(server.address().port));
  fs.renameSync(`${portfile}.tmp`, portfile);
});
process.on('SIGTERM', () => process.exit(0));
