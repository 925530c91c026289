// The Settings page's Workspace section over HTTP, on SQLite and PostgreSQL, against the real app on a real port: an
// owner changes the display name, reply-to and accent colour, uploads a logo (a multipart form), replaces and removes
// it; each change is an audit-log row; the refusals (an SVG, a GIF, a 2 MB file, a 4000 px wide image, a light colour,
// a bad address) come back in the form with their reason and save nothing; members see the values and no form, and
// are refused (403) if they post anyway; the region shows read-only.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startHarness, type Harness } from '../testing/harness.js';
import { bothDatabases } from '../testing/services.js';
import { logoToken } from '../workspaces/brand.js';
import { GIF, SVG, makeJpeg, makePng, pngWithChunks, solidPng } from '../workspaces/testing/images.js';
import { findWorkspace } from '../workspaces/workspaces.repo.js';
import { signedIn, type DashboardClient } from './testing/client.js';

const databases = await bothDatabases();

for (const d of databases) {
  describe(`dashboard settings: the workspace's face (${d.name})`, { skip: d.skip }, () => {
    let h: Harness;
    let workspaceId: string;
    let owner: DashboardClient;
    let member: DashboardClient;
    before(async () => {
      h = await startHarness({ database: d.database });
      workspaceId = (await h.workspace('business', 'Face Settings')).id;
      ({ client: owner } = await signedIn(h, workspaceId, 'owner'));
      ({ client: member } = await signedIn(h, workspaceId, 'member'));
    });
    after(() => h?.close());

    const row = async () => (await findWorkspace(h.db.kysely, workspaceId))!;
    const audit = async (action: string) =>
      (
        await h.db.kysely
          .selectFrom('audit_log')
          .select(['actor', 'detail'])
          .where('workspace_id', '=', workspaceId)
          .where('action', '=', action)
          .orderBy('id')
          .execute()
      ).map((r) => ({ actor: r.actor, detail: r.detail === null ? null : JSON.parse(r.detail) }));
    const upload = async (name: string, content: Uint8Array, type = 'image/png') => {
      await owner.get('/dashboard/settings');
      return owner.postMultipart('/dashboard/settings/logo', {}, { logo: { name, content, type } });
    };
    const logoError = (text: string) =>
      /<p class="notice error" role="alert" id="logo-error">([^<]*)<\/p>/.exec(text)?.[1];

    test('name, reply-to and colour: saved with audit rows; refusals beside their field, nothing saved', async () => {
      const page = await owner.get('/dashboard/settings');
      assert.equal(page.status, 200);
      assert.match(page.text, /<h2 id="workspace-title">Workspace<\/h2>/);
      assert.match(page.text, /id="ws-name" name="name" type="text"[^>]*value="Face Settings"/);
      assert.match(page.text, /<p id="region-now">none<\/p>/);
      assert.match(page.text, /pattern="#\[0-9A-Fa-f\]\{6\}"/, 'the colour field works without script');

      const saved = await owner.post('/dashboard/settings/workspace', {
        name: 'Face & Sons',
        reply_to: 'desk@face.example',
        brand_color: '#0B3D2E',
      });
      assert.equal(saved.status, 303);
      assert.equal(saved.headers.location, '/dashboard/settings?face=saved');
      const after = await owner.get('/dashboard/settings?face=saved');
      assert.match(after.text, /role="status" id="face-notice">Workspace settings saved\./);
      assert.match(after.text, /value="Face &amp; Sons"/);
      assert.match(after.text, /value="desk@face\.example"/);
      assert.match(after.text, /id="brand-color"[^>]*value="#0b3d2e"/);
      const r = await row();
      assert.deepEqual([r.name, r.reply_to, r.brand_color], ['Face & Sons', 'desk@face.example', '#0b3d2e']);
      assert.deepEqual(
        (await audit('workspace.name_set')).map((a) => a.detail),
        [{ name: 'Face & Sons', previous: 'Face Settings' }],
      );
      assert.match((await audit('workspace.reply_to_set'))[0]!.actor, /^user:owner\./);
      assert.deepEqual((await audit('workspace.brand_color_set'))[0]!.detail, { brand_color: '#0b3d2e' });

      const light = await owner.post('/dashboard/settings/workspace', {
        name: 'Renamed',
        reply_to: 'desk@face.example',
        brand_color: '#ffd700',
      });
      assert.equal(light.status, 400);
      assert.match(
        light.text,
        /<small id="brand-color-error" class="field-error">Accent colour #ffd700 has a contrast of only 1\.\d\d:1 against white text or the page background \(#eef0f4\); at least 4\.5:1 is needed\. Choose a darker colour\.<\/small>/,
      );
      assert.match(light.text, /id="brand-color"[^>]*value="#ffd700"[^>]*aria-invalid="true"/, 'the value as typed');
      const bad = await owner.post('/dashboard/settings/workspace', {
        name: 'Renamed',
        reply_to: 'not an address',
        brand_color: '',
      });
      assert.equal(bad.status, 400);
      assert.match(
        bad.text,
        /<small id="reply-to-error" class="field-error">Reply-to address: enter one plain e-mail address/,
      );
      const noName = await owner.post('/dashboard/settings/workspace', { name: ' ', reply_to: '', brand_color: '' });
      assert.match(
        noName.text,
        /<small id="name-error" class="field-error">Display name: enter 1 to 200 characters on one line\.<\/small>/,
      );
      assert.deepEqual(
        [(await row()).name, (await row()).brand_color],
        ['Face & Sons', '#0b3d2e'],
        'the refusals saved nothing',
      );
      assert.equal((await audit('workspace.name_set')).length, 1);

      // Empty fields clear the reply-to and the colour.
      await owner.get('/dashboard/settings');
      assert.equal(
        (await owner.post('/dashboard/settings/workspace', { name: 'Face & Sons', reply_to: '', brand_color: '' }))
          .status,
        303,
      );
      assert.deepEqual([(await row()).reply_to, (await row()).brand_color], [null, null]);
    });

    test('logo: uploaded without its metadata, shown, served, replaced and removed with audit rows', async () => {
      const png = pngWithChunks(solidPng(240, 60), [['tEXt', 'Software\0Tracker 1.0']]);
      const r = await upload('logo.png', png);
      assert.equal(r.status, 303, r.text.slice(0, 500));
      assert.equal(r.headers.location, '/dashboard/settings?face=logo');
      const w = await row();
      assert.equal(w.logo_type, 'image/png');
      const path = `/brand/${workspaceId}/logo/${logoToken(w.logo_blob!)}`;
      const page = await owner.get('/dashboard/settings?face=logo');
      assert.match(page.text, /id="face-notice">Logo saved\./);
      assert.ok(
        page.text.includes(`<img class="logo-preview" src="${path}" alt="Current logo of Face &amp; Sons">`),
        'the current logo is shown',
      );
      assert.match(page.text, /action="\/dashboard\/settings\/logo\/remove"/);
      const served = await h.request('GET', path);
      assert.equal(served.status, 200);
      assert.equal(served.headers['content-type'], 'image/png');
      assert.ok(!served.text.includes('Tracker'), 'served without the text chunk');
      const set = await audit('workspace.logo_set');
      assert.deepEqual([set[0]!.detail.type, set[0]!.detail.width, set[0]!.detail.height], ['image/png', 240, 60]);

      assert.equal((await upload('logo.jpg', makeJpeg(100, 100), 'image/jpeg')).status, 303);
      const w2 = await row();
      assert.equal(w2.logo_type, 'image/jpeg');
      assert.notEqual(w2.logo_blob, w.logo_blob);
      assert.equal((await h.request('GET', path)).status, 404, 'the old address is gone');
      await assert.rejects(h.runtime.blobs.get(w.logo_blob!), 'the replaced blob is deleted');

      await owner.get('/dashboard/settings');
      const removed = await owner.post('/dashboard/settings/logo/remove');
      assert.equal(removed.status, 303);
      assert.equal(removed.headers.location, '/dashboard/settings?face=logoRemoved');
      assert.match((await owner.get('/dashboard/settings?face=logoRemoved')).text, /<p id="logo-now">No logo: /);
      assert.equal((await row()).logo_blob, null);
      await assert.rejects(h.runtime.blobs.get(w2.logo_blob!), 'the removed blob is deleted');
      assert.equal((await audit('workspace.logo_removed')).length, 1);
    });

    test('logo refusals: SVG, GIF, 2 MB, 4000 px wide, damaged, none chosen, each with its reason', async () => {
      const cases: [string, Uint8Array, string, RegExp][] = [
        [
          'logo.svg',
          SVG,
          'image/svg+xml',
          /^This file is in SVG format: only PNG or JPEG images are accepted as a logo\.$/,
        ],
        [
          'logo.gif',
          GIF,
          'image/gif',
          /^This file is in GIF format: only PNG or JPEG images are accepted as a logo\.$/,
        ],
        [
          'big.png',
          pngWithChunks(solidPng(10, 10), [['zTXt', new Uint8Array(2 * 1024 * 1024)]]),
          'image/png',
          /^The file is larger than 512 KB: a logo may be at most 512 KB\.$/,
        ],
        [
          'wide.png',
          makePng(4000, 2, () => [0, 0, 0, 255]),
          'image/png',
          /^The logo is 4000×2 pixels; at most 1000×1000 pixels are accepted\.$/,
        ],
        ['cut.png', solidPng(30, 30).subarray(0, 70), 'image/png', /^The file is damaged or incomplete/],
        ['empty.png', new Uint8Array(0), 'image/png', /^Choose a PNG or JPEG file to upload\.$/],
      ];
      for (const [name, bytes, type, reason] of cases) {
        const r = await upload(name, bytes, type);
        assert.equal(r.status, 400, name);
        assert.match(logoError(r.text) ?? '', reason, name);
        assert.match(r.text, /id="logo-file"[^>]*aria-invalid="true"/, `${name}: the field is marked`);
      }
      assert.equal((await row()).logo_blob, null, 'nothing saved');
      assert.equal((await audit('workspace.logo_set')).length, 2, 'only the two earlier uploads');
    });

    test('two uploads at once: one logo stays, the other’s blob is deleted, none is left unreferenced', async () => {
      await owner.get('/dashboard/settings');
      const both = await Promise.all(
        [solidPng(20, 20), solidPng(30, 30)].map((content, i) =>
          owner.postMultipart(
            '/dashboard/settings/logo',
            {},
            { logo: { name: `l${i}.png`, content, type: 'image/png' } },
          ),
        ),
      );
      assert.deepEqual(
        both.map((r) => r.status),
        [303, 303],
      );
      const stored =
        d.name === 'SQLite'
          ? fs.readdirSync(path.join(h.config.dataDir, 'blobs', 'logo')).map((f) => `logo/${f}`)
          : (await h.db.kysely.selectFrom('blobs').select('key').where('key', 'like', 'logo/%').execute()).map(
              (r) => r.key,
            );
      assert.deepEqual(stored, [(await row()).logo_blob]);
      assert.equal(
        (await h.db.kysely.selectFrom('blob_deletions').select('key').execute()).length,
        0,
        'nothing left queued',
      );
      await owner.get('/dashboard/settings');
      assert.equal((await owner.post('/dashboard/settings/logo/remove')).status, 303);
    });

    test('members see the values read-only, no form, and are refused if they post', async () => {
      await h.db.kysely.updateTable('workspaces').set({ region: 'eu-central' }).where('id', '=', workspaceId).execute();
      await owner.get('/dashboard/settings');
      await owner.post('/dashboard/settings/workspace', {
        name: 'Face & Sons',
        reply_to: 'desk@face.example',
        brand_color: '#1a3fa8',
      });
      const page = await member.get('/dashboard/settings');
      assert.equal(page.status, 200);
      assert.doesNotMatch(page.text, /action="\/dashboard\/settings\/(workspace|logo)/);
      assert.match(page.text, /<dd id="face-name">Face &amp; Sons<\/dd>/);
      assert.match(page.text, /<dd id="face-reply-to">desk@face\.example<\/dd>/);
      assert.match(
        page.text,
        /<dd id="face-color"><img class="swatch" src="data:image\/svg\+xml,[^"]+" alt=""[^>]*> <code>#1a3fa8<\/code>/,
      );
      assert.match(page.text, /<p id="region-now"><code>eu-central<\/code><\/p>/);
      assert.match(page.text, /Only owners and admins can change settings\./);
      const refused = await member.post('/dashboard/settings/workspace', { name: 'Member was here' });
      assert.equal(refused.status, 403);
      const logo = await member.postMultipart(
        '/dashboard/settings/logo',
        {},
        { logo: { name: 'a.png', content: solidPng(4, 4), type: 'image/png' } },
      );
      assert.equal(logo.status, 403);
      assert.equal((await member.post('/dashboard/settings/logo/remove')).status, 403);
      assert.equal((await row()).name, 'Face & Sons');
    });
  });
}
