// The dashboard in the visitor's language (Accept-Language), over HTTP against the real app: every word a view asks
// for is in the catalogue and every dashboard word is asked for somewhere; German, French and Spanish pages say their
// own words under a matching <html lang>; the services' problems and refusals follow; the API's English stays,
// marked lang="en"; without a header or with languages Signet does not know, the pages are English.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { catalogues, t, type Locale } from '../i18n/i18n.js';
import { startHarness, type Harness } from '../testing/harness.js';
import { dashboardClient, signedIn } from './testing/client.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const read = (dir: string, ext: string) =>
  fs
    .readdirSync(path.join(here, dir))
    .filter((f) => f.endsWith(ext) && !f.endsWith('.test.ts'))
    .map((f) => fs.readFileSync(path.join(here, dir, f), 'utf8'));
const dashboardKeys = Object.keys(catalogues.en)
  .filter((k) => k.startsWith('dashboard.'))
  .map((k) => k.slice('dashboard.'.length));
// Keys that words.ts builds from a status or role (typed there, so the compiler checks them).
const BUILT = ['status.', 'role.', 'delivery.', 'instance.'];

describe('dashboard words', () => {
  test('every key a view or route names is in the catalogue, and every dashboard key is named somewhere', () => {
    const views = read('views', '.eta').join('\n');
    const code = read('.', '.ts').join('\n');
    const named = new Set([...(views + code).matchAll(/'([a-zA-Z]+(?:\.[a-zA-Z]+)+)'/g)].map((m) => m[1]!));
    const plurals = new Set([...views.matchAll(/it\.hn\('([^']+)'/g)].map((m) => m[1]!));
    const inViews = [...views.matchAll(/it\.(?:h|t|hn)\(\s*'([^']+)'/g)].map((m) => m[1]!);
    assert.ok(inViews.length > 150, `${inViews.length} keys found in the views`);
    for (const k of inViews) {
      const keys = plurals.has(k) ? [`${k}.one`, `${k}.other`] : [k];
      for (const key of keys) assert.ok(dashboardKeys.includes(key), `views name "${key}", the catalogue has none`);
    }
    const unused = dashboardKeys.filter(
      (k) => !named.has(k) && !plurals.has(k.replace(/\.(one|other)$/, '')) && !BUILT.some((p) => k.startsWith(p)),
    );
    assert.deepEqual(unused, [], 'dashboard keys nothing names');
  });
});

describe('dashboard languages over HTTP', () => {
  let h: Harness;
  let ws: { id: string };
  before(async () => {
    h = await startHarness();
    ws = await h.workspace('business', 'Acme');
  });
  after(() => h?.close());

  const lang = (html: string) => /<html lang="([^"]+)"(?: dir="rtl")?>/.exec(html)?.[1];
  const word = (l: Locale, key: string) => t(l, `dashboard.${key}` as never);

  test('<html lang> and the words follow Accept-Language; no header or unknown languages get English', async () => {
    const cases: [string | undefined, Locale][] = [
      ['de-DE,de;q=0.9,en;q=0.8', 'de'],
      ['fr', 'fr'],
      ['es-MX, en;q=0.5', 'es'],
      ['en;q=0.2, de;q=0.9', 'de'],
      ['it, pt;q=0.8', 'it'],
      ['pt-BR', 'pt'],
      ['ja-JP,ja;q=0.9', 'ja'],
      ['ar-SA', 'ar'],
      ['zh-CN, he;q=0.8', 'en'],
      [undefined, 'en'],
    ];
    for (const [header, l] of cases) {
      const r = await dashboardClient(h, { acceptLanguage: header }).get('/dashboard/sign-in');
      assert.equal(r.status, 200);
      assert.equal(lang(r.text), l, String(header));
      assert.ok(r.text.includes(`<title>${word(l, 'signIn.title')} · `), `${l}: title`);
      assert.ok(r.text.includes(`<h1>${word(l, 'signIn.heading')}</h1>`), `${l}: heading`);
      assert.ok(r.text.includes(`>${word(l, 'signIn.password')}</label>`), `${l}: label`);
      assert.equal(r.text.includes(`<html lang="${l}" dir="rtl">`), l === 'ar', `${l}: direction`);
    }
  });

  test('a signed-in page in German: navigation, headings, roles, and nothing of the English layout', async () => {
    const { client } = await signedIn(h, ws.id, 'owner', 'inhaber@example.com', { acceptLanguage: 'de' });
    const overview = await client.get('/dashboard/overview');
    assert.equal(overview.status, 200);
    assert.equal(lang(overview.text), 'de');
    for (const w of ['Übersicht', 'Dokumente', 'API-Schlüssel', 'Audit-Protokoll', 'Handlungsbedarf', 'Abmelden'])
      assert.ok(overview.text.includes(w), w);
    assert.match(overview.text, /angemeldet als inhaber@example\.com \(Inhaber\)/);
    assert.doesNotMatch(overview.text, /Overview|Sign out|Skip to content|Needs attention|signed in as/);
    const people = await client.get('/dashboard/people');
    assert.match(people.text, /<td>inhaber@example\.com<\/td><td>Inhaber<\/td>/);
    assert.ok(people.text.includes('Person einladen'), 'invite heading');
    const missing = await client.get('/dashboard/nope');
    assert.equal(missing.status, 404);
    assert.match(missing.text, /<h1>Nicht gefunden<\/h1>/);
  });

  test('problems and refusals in the visitor\'s language; the API\'s English marked lang="en"', async () => {
    const fr = (await signedIn(h, ws.id, 'owner', 'proprio@example.com', { acceptLanguage: 'fr' })).client;
    const invite = await fr.post('/dashboard/people', { email: 'nope', role: 'member' });
    assert.equal(invite.status, 400);
    assert.ok(invite.text.includes('>Saisissez une adresse e-mail.</p>'), 'the problem in French');

    const es = (await signedIn(h, ws.id, 'member', 'miembro@example.com', { acceptLanguage: 'es' })).client;
    await es.get('/dashboard/developers/keys');
    const refused = await es.post('/dashboard/developers/keys');
    assert.equal(refused.status, 403);
    assert.match(refused.text, /<h1>No permitido<\/h1>\s*<p>Solo los propietarios y administradores/);

    const de = (await signedIn(h, ws.id, 'admin', 'admin.de@example.com', { acceptLanguage: 'de' })).client;
    await de.get('/dashboard/developers/webhooks');
    const hook = await de.post('/dashboard/developers/webhooks', { target_url: 'ftp://example.com/x' });
    assert.equal(hook.status, 400);
    assert.match(hook.text, /id="create-error" lang="en">target_url refused/);
    const en = (await signedIn(h, ws.id, 'admin', 'admin.en@example.com')).client;
    await en.get('/dashboard/developers/webhooks');
    const hookEn = await en.post('/dashboard/developers/webhooks', { target_url: 'ftp://example.com/x' });
    assert.match(hookEn.text, /id="create-error">target_url refused/, 'an English page marks nothing');

    const c = dashboardClient(h, { acceptLanguage: 'de' });
    await c.get('/dashboard/sign-in');
    const bad = await c.post('/dashboard/sign-in', { email: 'admin.de@example.com', password: 'not the password' });
    assert.equal(bad.status, 401);
    assert.ok(bad.text.includes('E-Mail-Adresse oder Passwort ist nicht korrekt.'), 'the refusal in German');
  });
});
