// A real OpenID Connect provider (the certified npm package oidc-provider) on loopback, for the
// single sign-on browser test. One static client and a few users, both given as JSON in the
// environment variable OIDC_TEST_CONFIG:
//   {"client": {"client_id", "client_secret", "redirect_uri"},
//    "users": [{"login", "password", "email", "email_verified", "name"}]}
// It listens on 127.0.0.1 on a free port and prints one line, "issuer <url>", once it serves.
//
// The sign-in and consent pages are oidc-provider's own development interactions; they take
// any login without looking at the password, so the middleware below checks the password
// first (a wrong one is refused with 401 and the interaction is not finished).
import http from 'node:http';
import * as querystring from 'node:querystring';

import Provider from 'oidc-provider';

const config = JSON.parse(process.env.OIDC_TEST_CONFIG);
const users = new Map(config.users.map((u) => [u.login, u]));

async function findAccount(_ctx, id) {
  const user = users.get(id);
  if (!user) return undefined;
  return {
    accountId: id,
    async claims() {
      return {
        sub: id, email: user.email, email_verified: user.email_verified, name: user.name,
      };
    },
  };
}

async function readBody(req) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  return Buffer.concat(chunks).toString('utf8');
}

// the sign-in form posts to /interaction/<uid>; consent posts there too (prompt=consent)
const SUBMIT = /^\/interaction\/[^/]+$/;

async function checkPassword(ctx, next) {
  if (ctx.method === 'POST' && SUBMIT.test(ctx.path)) {
    const raw = await readBody(ctx.req);
    const form = querystring.parse(raw);
    if (form.prompt === 'login') {
      const user = users.get(String(form.login));
      if (!user || user.password !== form.password) {
        ctx.status = 401;
        ctx.type = 'text/plain';
        ctx.body = 'wrong login or password';
        return;
      }
    }
    ctx.req.body = raw; // oidc-provider reads an already read body from here
  }
  await next();
}

const server = http.createServer();
server.listen(0, '127.0.0.1', () => {
  const issuer = `http://127.0.0.1:${server.address().port}`;
  const { client } = config;
  const provider = new Provider(issuer, {
    clients: [{
      client_id: client.client_id,
      client_secret: client.client_secret,
      redirect_uris: [client.redirect_uri],
      post_logout_redirect_uris: [client.redirect_uri],
      grant_types: ['authorization_code'],
      response_types: ['code'],
    }],
    findAccount,
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    // the scope's claims in the ID token: Authlib (Streamlit's client) reads the user from it
    conformIdTokenClaims: false,
    cookies: { keys: [client.client_secret] },
    features: { devInteractions: { enabled: true } },
  });
  provider.use(checkPassword);
  server.on('request', provider.callback());
  process.stdout.write(`issuer ${issuer}\n`);
});

for (const signal of ['SIGTERM', 'SIGINT']) {
  process.on(signal, () => server.close(() => process.exit(0)));
}
