// The role table (roles.ts) against the real app on a real port: every /dashboard route Fastify registers has an
// entry, and every entry is a registered route; for every route, someone one rank below its role is refused (a
// signed-out visitor is sent to sign-in; a signed-in person gets the 403 page naming the role, though the form's
// CSRF token is valid, and nothing changes) and someone at its role passes the gate (a GET answers 200 or a
// redirect, a POST anything but 403). The ranking and the gate's answer for a route the table lacks, as functions.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { catalogues } from '../i18n/i18n.js';
import { makePdf } from '../documents/pdf/testing/fixtures.js';
import { b64, startE2E, type E2E } from '../testing/e2e.js';
import { templateBody } from '../templates/testing/fixtures.js';
import type { Res } from '../testing/harness.js';
import { bulkCsv } from '../templates/testing/bulk.js';
import { createUserLink } from './people.service.js';
import { allows, mayUse, needOf, REFUSAL, routeKey, ROUTE_ROLES, verdict, type Need } from './roles.js';
import { dashboardClient, signedIn, type DashboardClient } from './testing/client.js';

const NEEDS: readonly Need[] = ['public', 'member', 'admin', 'owner'];
const ROUTES = Object.entries(ROUTE_ROLES) as [string, Need][];
const below = (need: Need): Need | null => NEEDS[NEEDS.indexOf(need) - 1] ?? null;
const refusalText = (need: 'admin' | 'owner') => catalogues.en[`dashboard.${REFUSAL[need]}`];

describe('the role table, as functions', () => {
  test('allows: each role may use its own rank and every rank below, nothing above', () => {
    for (const [i, role] of NEEDS.entries())
      for (const [j, need] of NEEDS.entries()) assert.equal(allows(role, need), i >= j, `${role} → ${need}`);
  });

  test('HEAD follows its GET; /dashboard/ is /dashboard; unknown routes have no entry', () => {
    assert.equal(routeKey('HEAD', '/dashboard/developers/keys/:id'), 'GET /dashboard/developers/keys/:id');
    assert.equal(needOf('head', '/dashboard/people'), 'member');
    assert.equal(needOf('GET', '/dashboard/'), 'member');
    assert.equal(needOf('POST', '/dashboard/people'), 'owner');
    assert.equal(needOf('DELETE', '/dashboard/people'), undefined);
    assert.equal(needOf('GET', '/dashboard/toString'), undefined, 'no inherited property counts as an entry');
    assert.equal(mayUse('admin', 'POST /dashboard/people'), false);
    assert.equal(mayUse('owner', 'POST /dashboard/people'), true);
  });

  test('the gate: a route missing from the table is refused to everyone, signed in or not; 404s need a person', () => {
    for (const role of [null, 'member', 'admin', 'owner'] as const)
      assert.deepEqual(verdict('POST', '/dashboard/new-thing', role), {
        pass: false,
        signIn: false,
        reason: 'error.noRule',
        unlisted: true,
      });
    assert.deepEqual(verdict('GET', undefined, null), { pass: false, signIn: true });
    assert.deepEqual(verdict('GET', undefined, 'member'), { pass: true });
    assert.deepEqual(verdict('GET', '/dashboard/sign-in', null), { pass: true });
    assert.deepEqual(verdict('POST', '/dashboard/settings/reminders', 'member'), {
      pass: false,
      signIn: false,
      reason: 'error.managersOnly',
      unlisted: false,
    });
  });
});

describe('the role table, on every dashboard route', () => {
  let e: E2E;
  const clients = {} as Record<Need, DashboardClient>;
  const ids = {} as Record<string, string>;
  let sealedDoc: string;

  before(async () => {
    e = await startE2E({ tier: 'enterprise' });
    const h = e.h;
    for (const role of ['member', 'admin', 'owner'] as const)
      clients[role] = (await signedIn(h, e.workspaceId, role)).client;
    clients.public = dashboardClient(h);

    // One of each thing a route's path names, in this workspace (a key of its own: the fixture's key must live).
    ids['keys/:id'] = (await h.key(e.workspaceId)).id;
    const pdf = b64(await makePdf({ pages: 1, text: [['Roles']] }));
    const send = async (who: string) => {
      const r = await e.api('POST', '/v1/signing-requests', {
        title: `Roles ${who}`,
        signers: [{ role: 'signer1', email: `${who}@example.com`, name: who }],
        file: { name: 'roles.pdf', content_base64: pdf },
        placement: 'auto_append',
      });
      assert.equal(r.status, 201, r.text);
      return r.json as { document_id: string; signing_requests: { id: string }[] };
    };
    const sealed = await send('sealed.signer');
    const open = await send('open.signer');
    ids['documents/:id'] = open.document_id;
    ids['requests/:request'] = open.signing_requests[0]!.id;
    sealedDoc = sealed.document_id;
    await e.work();
    const link = await e.linkFor('sealed.signer@example.com');
    assert.equal((await h.request('POST', `/sign/${link}/view`)).status, 200);
    const signed = await h.request('POST', `/sign/${link}/sign`, { body: { signature: { type: 'typed', text: 'S' } } });
    assert.equal(signed.status, 200, signed.text);
    await e.work();

    // A template and a staged instance of it, before the hook exists (its event is not delivered there).
    const tpl = await e.api('POST', '/v1/templates', await templateBody('Roles template'));
    assert.equal(tpl.status, 201, tpl.text);
    ids['templates/:id'] = tpl.json.id;
    ids['versions/:n'] = '1';
    const staged = await e.api('POST', `/v1/templates/${tpl.json.id}/instantiate`, {
      recipients: [
        { slot: 'client', name: 'Client', email: 'client.roles@example.com' },
        { slot: 'provider', name: 'Provider', email: 'provider.roles@example.com' },
      ],
      field_values: { client_name: 'Roles Ltd', plan: 'pro' },
      review: true,
    });
    assert.equal(staged.status, 201, staged.text);
    ids['reviews/:id'] = staged.json.template_instance.id;

    const hook = await e.api('POST', '/v1/hooks', { target_url: 'http://127.0.0.1:9/roles' });
    assert.equal(hook.status, 201, hook.text);
    ids['webhooks/:id'] = hook.json.id;
    await clients.owner.get('/dashboard/account');
    assert.equal((await clients.owner.post(`/dashboard/developers/webhooks/${hook.json.id}/test`)).status, 303);
    const delivery = await h.db.kysely
      .selectFrom('deliveries')
      .select('id')
      .where('hook_id', '=', hook.json.id)
      .executeTakeFirstOrThrow();
    ids['deliveries/:delivery'] = delivery.id;
    const invite = await createUserLink(h, {
      email: 'not.yet@example.com',
      workspaceId: e.workspaceId,
      role: 'member',
      by: 'test',
    });
    ids['set-password/:token'] = new URL(invite.url).pathname.split('/').at(-1)!;
    await clients.owner.get('/dashboard/send');
    const draft = await clients.owner.postMultipart(
      '/dashboard/send',
      { title: 'Roles' },
      { file: { name: 'roles.pdf', type: 'application/pdf', content: Buffer.from(pdf, 'base64') } },
    );
    assert.equal(draft.status, 303, draft.text.slice(0, 300));
    ids['send/:draft'] = /drf_[0-9a-f]+/.exec(draft.headers.location ?? '')![0];
    // A kept template upload (step 1 of "New template"), whose PDF the visual editor draws.
    const upload = await clients.owner.postMultipart(
      '/dashboard/templates/new',
      { name: 'Roles upload' },
      { pdf: { name: 'roles.pdf', type: 'application/pdf', content: Buffer.from(pdf, 'base64') } },
    );
    assert.equal(upload.status, 200, upload.text.slice(0, 300));
    ids['uploads/:upload'] = /name="upload" value="upload-[a-p]+\/([0-9a-f]{32})"/.exec(upload.text)![1]!;
    const bulk = await h.request('POST', `/v1/templates/${tpl.json.id}/bulk-sends`, {
      token: e.token,
      rawBody: bulkCsv('roles', 1),
      headers: { 'content-type': 'text/csv' },
    });
    assert.equal(bulk.status, 202, bulk.text);
    ids['bulk-sends/:id'] = bulk.json.bulk_send.id;
  });
  after(() => e?.close());

  /** A real path for the route: each `:param` is the thing of that kind made above (the PDF: a sealed document). */
  const pathOf = (route: string): string => {
    const url = route.slice(route.indexOf(' ') + 1);
    if (route === 'GET /dashboard/documents/:id/signed.pdf') return url.replace(':id', sealedDoc);
    return url.replace(/([^/]+)\/:(\w+)/g, (all: string) => {
      assert.ok(ids[all], `roles.test.ts has no sample for "${all}" (${route}): add one in before()`);
      return all.replace(/:\w+$/, ids[all]!);
    });
  };
  /** GET or POST the route as `who`; a POST carries a valid CSRF token and no fields. */
  const use = async (who: Need, route: string): Promise<Res> => {
    const c = clients[who];
    if (route.startsWith('GET ')) return c.get(pathOf(route));
    if (!c.csrf()) await c.get(who === 'public' ? '/dashboard/sign-in' : '/dashboard/account');
    assert.ok(c.csrf(), `${who} has a CSRF token`);
    return c.post(pathOf(route));
  };
  const tableRows = async (table: 'api_keys' | 'hooks') =>
    (await e.h.db.kysely.selectFrom(table).select('id').where('workspace_id', '=', e.workspaceId).execute()).length;

  test('every registered /dashboard route has a role, and every role is for a registered route', () => {
    const registered = new Set(
      e.h.app.routeList
        .filter((r) => r.method !== 'HEAD' && /^\/dashboard(\/|$)/.test(r.url))
        .map((r) => routeKey(r.method, r.url)),
    );
    assert.ok(registered.size > 30, `the app registers the dashboard's routes (${registered.size})`);
    const missing = [...registered].filter((k) => needOf(...(k.split(' ') as [string, string])) === undefined);
    assert.deepEqual(missing, [], `routes with no role in src/dashboard/roles.ts: ${missing.join(', ')}`);
    const stale = Object.keys(ROUTE_ROLES).filter((k) => !registered.has(k));
    assert.deepEqual(stale, [], `roles.ts names routes the app does not register: ${stale.join(', ')}`);
  });

  test('one rank below a route’s role is refused, and nothing changes', async () => {
    const before = { keys: await tableRows('api_keys'), hooks: await tableRows('hooks') };
    for (const [route, need] of ROUTES) {
      const who = below(need);
      if (!who) continue; // public routes: nobody is below a signed-out visitor
      const r = await use(who, route);
      if (who === 'public') {
        assert.equal(r.status, 303, `${route}: a signed-out visitor is sent to sign-in`);
        assert.match(r.headers.location ?? '', /^\/dashboard\/sign-in(\?next=|$)/, route);
        continue;
      }
      assert.equal(r.status, 403, `${route}: ${who} is refused`);
      assert.ok(r.text.includes(refusalText(need as 'admin' | 'owner')), `${route}: the page says who may`);
    }
    assert.deepEqual({ keys: await tableRows('api_keys'), hooks: await tableRows('hooks') }, before, 'none made');
    const key = await e.h.db.kysely
      .selectFrom('api_keys')
      .select(['revoked_at', 'allowed_ips'])
      .where('id', '=', ids['keys/:id']!)
      .executeTakeFirstOrThrow();
    assert.deepEqual(key, { revoked_at: null, allowed_ips: '[]' }, 'the key is as it was');
    const hook = await e.h.db.kysely
      .selectFrom('hooks')
      .select('deleted_at')
      .where('id', '=', ids['webhooks/:id']!)
      .executeTakeFirstOrThrow();
    assert.equal(hook.deleted_at, null, 'the hook is not deleted');
    const deliveries = await e.h.db.kysely
      .selectFrom('deliveries')
      .select('id')
      .where('hook_id', '=', ids['webhooks/:id']!)
      .execute();
    assert.equal(deliveries.length, 1, 'no test sent, nothing replayed');
    assert.equal((await e.api('GET', `/v1/documents/${ids['documents/:id']}`)).json.status, 'in_progress');
    const invited = await e.h.db.kysely
      .selectFrom('mail_outbox')
      .select('id')
      .where('template', '=', 'member_invitation')
      .execute();
    assert.equal(invited.length, 0, 'nobody invited');
  });

  test('at a route’s role the gate lets the request through', async () => {
    // Pages first, then actions (which revoke, delete and withdraw); signing out last.
    const order = (route: string) => (route.startsWith('GET ') ? 0 : route === 'POST /dashboard/sign-out' ? 2 : 1);
    for (const [route, need] of [...ROUTES].sort(([a], [b]) => order(a) - order(b))) {
      const r = await use(need, route);
      if (route.startsWith('GET ')) {
        assert.ok([200, 302, 303].includes(r.status), `${route} as ${need}: ${r.status}`);
      } else {
        assert.notEqual(r.status, 403, `${route} as ${need}: ${r.text.slice(0, 300)}`);
      }
      if (need !== 'public' && route !== 'POST /dashboard/sign-out')
        assert.doesNotMatch(r.headers.location ?? '', /^\/dashboard\/sign-in/, `${route}: still signed in`);
    }
  });
});
