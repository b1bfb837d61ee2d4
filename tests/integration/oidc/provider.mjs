// A real OpenID provider (oidc-provider) on loopback for mcp-exec's identity
// tests: client_credentials with resource indicators, JWT access tokens for
// the resource URI given.  Test-only endpoints under /_test/ mint the bad
// tokens a provider would never issue, and rotate the signing key.
// With --bare it is an issuer of the test's own instead: discovery and a
// JWKS only, its keys made here, and tokens signed byte by byte as the
// test asks (/_test/sign), crit, odd signatures and all.
// With --tls DIR it speaks HTTPS with DIR/server.pem and DIR/server.key.
// Usage: node provider.mjs PORTFILE RESOURCE [--tls DIR] [--bare]
import http from 'node:http';
import https from 'node:https';
import crypto from 'node:crypto';
import fs from 'node:fs';
import Provider from 'oidc-provider';
import * as jose from 'jose';

const [portfile, RESOURCE, ...opts] = process.argv.slice(2);
const TLS = opts.includes('--tls') ? opts[opts.indexOf('--tls') + 1] : null;
const BARE = opts.includes('--bare');
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

// --bare: the keys, each with what its JWKS entry says beside the key.
// rs: plain RSA; ps/rsalg: RSA bound to PS256/RS256 by its alg; es: P-256;
// small: 1024 bits; enc: key_ops without verify; late: published only
// when /_test/publish says so (a rotation).
const bare = { keys: {}, published: new Set(), delay: 0, hits: 0 };
function bareKeys() {
  const rsa = (bits) => crypto.generateKeyPairSync('rsa', { modulusLength: bits });
  const make = { rs: [rsa(2048), {}], ps: [rsa(2048), { alg: 'PS256' }],
    rsalg: [rsa(2048), { alg: 'RS256' }],
    es: [crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' }), {}],
    small: [rsa(1024), {}], enc: [rsa(2048), { key_ops: ['encrypt'] }],
    late: [rsa(2048), {}] };
  for (const [kid, [pair, extra]] of Object.entries(make)) {
    bare.keys[kid] = { priv: pair.privateKey,
      jwk: { ...pair.publicKey.export({ format: 'jwk' }), kid, ...extra } };
    if (kid !== 'late') bare.published.add(kid);
  }
}

// A compact JWS of exactly the header and claims asked for, signed with
// the key named (the provider's own: "op") by node's crypto, not jose:
// jose would refuse to sign a crit it does not know.  The header's kid is
// the key's name unless the header says otherwise.
function signRaw({ name, alg, header, claims }) {
  const priv = name === 'op' ? crypto.createPrivateKey({ key, format: 'jwk' })
    : bare.keys[name].priv;
  const h = { alg, kid: name === 'op' ? key.kid : name, typ: 'at+jwt', ...header };
  // Claims given as text are signed as they are (numbers past 2^53 too).
  const payload = typeof claims === 'string' ? claims : JSON.stringify(claims);
  const input = `${b64(h)}.${Buffer.from(payload).toString('base64url')}`;
  const hash = `sha${alg.slice(2)}`;
  const opt = alg.startsWith('PS')
    ? { key: priv, padding: crypto.constants.RSA_PKCS1_PSS_PADDING,
        saltLength: Number(alg.slice(2)) / 8 }
    : alg.startsWith('ES') ? { key: priv, dsaEncoding: 'ieee-p1363' } : priv;
  return `${input}.${crypto.sign(hash, Buffer.from(input), opt).toString('base64url')}`;
}

async function body(req) {
  const chunks = [];
  for await (const c of req) chunks.push(c);
  return JSON.parse(Buffer.concat(chunks).toString());
}

// --bare's own documents, each after the delay the test set.
async function bareServe(url, res) {
  const json = (o) => { res.setHeader('Content-Type', 'application/json');
    res.end(JSON.stringify(o)); };
  if (url.pathname === '/.well-known/openid-configuration' || url.pathname === '/jwks') {
    bare.hits++;
    await new Promise((r) => setTimeout(r, bare.delay));
  }
  if (url.pathname === '/.well-known/openid-configuration')
    return json({ issuer, jwks_uri: `${issuer}/jwks` });
  if (url.pathname === '/jwks')
    return json({ keys: [...bare.published].map((k) => bare.keys[k].jwk) });
  res.statusCode = 404;
  res.end();
}

const handler = async (req, res) => {
  const url = new URL(req.url, issuer);
  try {
    if (url.pathname === '/_test/sign') {
      res.end(signRaw(await body(req)));
    } else if (url.pathname === '/_test/slow') {
      bare.delay = Number(url.searchParams.get('ms'));
      res.end('ok');
    } else if (url.pathname === '/_test/publish') {
      bare.published.add(url.searchParams.get('kid'));
      res.end('ok');
    } else if (url.pathname === '/_test/hits') {
      res.end(String(bare.hits));
    } else if (BARE) {
      await bareServe(url, res);
    } else if (url.pathname === '/_test/mint') {
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
};
const server = TLS ? https.createServer({
  cert: fs.readFileSync(`${TLS}/server.pem`), key: fs.readFileSync(`${TLS}/server.key`),
}, handler) : http.createServer(handler);
server.listen(0, '127.0.0.1', async () => {
  issuer = `${TLS ? 'https' : 'http'}://127.0.0.1:${server.address().port}`;
  if (BARE) {
    bareKeys();
  } else {
    key = await newKey();
    provider = makeProvider();
  }
  fs.writeFileSync(`${portfile}.tmp`, String(server.address().port));
  fs.renameSync(`${portfile}.tmp`, portfile);
});
process.on('SIGTERM', () => process.exit(0));
