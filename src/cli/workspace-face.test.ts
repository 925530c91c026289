// `signet workspace update WS_ID --name/--reply-to/--brand-color/--logo/--no-logo`, in child processes on a SQLite
// file: each change is saved with its audit-log row, a replaced logo's blob is deleted, and every refusal (an SVG, a
// GIF, a 2 MB file, a 4000 px wide image, a light colour, a bad address) is one line on stderr with nothing saved.
// Then through the real app: the Reply-To changed by the command is the one the next invitation carries.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { makePdf } from '../documents/pdf/testing/fixtures.js';
import { runSignet } from '../testing/child-server.js';
import { b64, startE2E } from '../testing/e2e.js';
import { logoToken } from '../workspaces/brand.js';
import { GIF, SVG, makeJpeg, makePng, pngWithChunks, solidPng } from '../workspaces/testing/images.js';
import { createWorkspace, findWorkspace } from '../workspaces/workspaces.repo.js';
import { cliDataDir, oneErrorLine, oneJson } from './testing/cli.js';

describe('signet workspace update: name, reply-to, brand colour, logo', () => {
  const cli = cliDataDir();
  const file = (name: string, bytes: Uint8Array) => {
    const p = path.join(cli.dir, name);
    fs.writeFileSync(p, bytes);
    return p;
  };
  const blobFiles = () =>
    fs.existsSync(path.join(cli.dir, 'blobs', 'logo')) ? fs.readdirSync(path.join(cli.dir, 'blobs', 'logo')) : [];

  test('sets each setting with an audit row, prints the settings, replaces and removes the logo', async () => {
    const ws = await createWorkspace(cli.db.kysely, { name: 'Face Co', tier: 'business' }, Date.now());
    const update = (...args: string[]) => cli.signet(['workspace', 'update', ws.id, ...args]);
    const png = file('logo.png', pngWithChunks(solidPng(200, 80), [['tEXt', 'Author\0Someone']]));
    const set = oneJson(
      await update(
        '--name',
        '  Face & Co. ',
        '--reply-to',
        'contracts@face.example',
        '--brand-color',
        '#0B3D2E',
        '--logo',
        png,
        '--json',
      ),
      'set',
    );
    const row = (await findWorkspace(cli.db.kysely, ws.id))!;
    assert.deepEqual(set, {
      workspace_id: ws.id,
      name: 'Face & Co.',
      reply_to: 'contracts@face.example',
      brand_color: '#0b3d2e',
      logo: { url: `http://localhost:3000/brand/${ws.id}/logo/${logoToken(row.logo_blob!)}`, type: 'image/png' },
      region: null,
      retention_days: null,
      default_locale: null,
    });
    assert.equal(row.name, 'Face & Co.');
    assert.equal(row.slug, ws.slug, 'the slug stays');
    assert.deepEqual(blobFiles(), [row.logo_blob!.split('/')[1]]);
    const stored = fs.readFileSync(path.join(cli.dir, 'blobs', row.logo_blob!));
    assert.ok(!stored.includes('Someone'), 'the stored logo has no text chunk');

    // A JPEG replaces it: the old blob is deleted after the commit, nothing stays queued.
    const jpeg = file('logo.jpg', makeJpeg(64, 64, { exif: 'camera' }));
    const human = await update('--logo', jpeg);
    assert.equal(human.code, 0, human.stderr);
    const row2 = (await findWorkspace(cli.db.kysely, ws.id))!;
    assert.equal(row2.logo_type, 'image/jpeg');
    assert.match(
      human.stdout,
      new RegExp(`^logo: image/jpeg http://localhost:3000/brand/${ws.id}/logo/[0-9a-f]{16}$`, 'm'),
    );
    assert.match(human.stdout, /^brand colour: #0b3d2e$/m);
    assert.match(human.stdout, /^region: none$/m);
    assert.deepEqual(blobFiles(), [row2.logo_blob!.split('/')[1]], 'the replaced logo’s file is gone');
    const queued = await cli.db.kysely.selectFrom('blob_deletions').selectAll().execute();
    assert.deepEqual(queued, []);

    const cleared = oneJson(await update('--no-logo', '--no-reply-to', '--brand-color', 'none', '--json'), 'clear');
    assert.equal(cleared.logo, null);
    assert.equal(cleared.reply_to, null);
    assert.equal(cleared.brand_color, null);
    assert.deepEqual(blobFiles(), []);

    const audit = await cli.db.kysely
      .selectFrom('audit_log')
      .select(['actor', 'action', 'detail'])
      .where('workspace_id', '=', ws.id)
      .orderBy('id')
      .execute();
    assert.deepEqual(
      audit.map((a) => a.action),
      [
        'workspace.name_set',
        'workspace.reply_to_set',
        'workspace.brand_color_set',
        'workspace.logo_set',
        'workspace.logo_set',
        'workspace.reply_to_set',
        'workspace.brand_color_set',
        'workspace.logo_removed',
      ],
    );
    assert.ok(
      audit.every((a) => a.actor.startsWith('cli:')),
      'the actor is the CLI user',
    );
    assert.deepEqual(JSON.parse(audit[0]!.detail!), { name: 'Face & Co.', previous: 'Face Co' });
    assert.deepEqual(JSON.parse(audit[1]!.detail!), { reply_to: 'contracts@face.example' });
    assert.deepEqual(JSON.parse(audit[2]!.detail!), { brand_color: '#0b3d2e' });
    const logoSet = JSON.parse(audit[3]!.detail!);
    assert.deepEqual([logoSet.type, logoSet.width, logoSet.height], ['image/png', 200, 80]);
  });

  test('refusals: one line each, non-zero, nothing saved', async () => {
    const ws = await createWorkspace(cli.db.kysely, { name: 'Strict Co', tier: 'business' }, Date.now());
    const update = (...args: string[]) => cli.signet(['workspace', 'update', ws.id, ...args]);
    const cases: [string[], RegExp][] = [
      [['--logo', file('a.svg', SVG)], /The logo is an SVG image; only PNG or JPEG images are accepted/],
      [['--logo', file('a.gif', GIF)], /The logo is a GIF image; only PNG or JPEG images are accepted/],
      [['--logo', file('big.png', new Uint8Array(2 * 1024 * 1024))], /The logo is 2048 KB; at most 512 KB/],
      [
        [
          '--logo',
          file(
            'wide.png',
            makePng(4000, 2, () => [0, 0, 0, 255]),
          ),
        ],
        /4000×2 pixels; at most 1000×1000/,
      ],
      [['--logo', file('cut.png', solidPng(20, 20).subarray(0, 60))], /damaged or incomplete/],
      [['--logo', path.join(cli.dir, 'missing.png')], /cannot read --logo .*missing\.png: ENOENT/],
      [['--brand-color', '#ffd700'], /#ffd700 has a contrast of 1\.\d\d:1 against .*at least 4\.5:1/],
      [['--brand-color', 'green'], /#RRGGBB/],
      [['--reply-to', 'not an address'], /not a plain e-mail address/],
      [['--name', '   '], /name must be 1 to 200 characters/],
      // A good change beside a refused one: neither is saved.
      [['--name', 'Renamed', '--brand-color', '#eeeeee'], /contrast/],
    ];
    for (const [args, reason] of cases) assert.match(oneErrorLine(await update(...args), args.join(' ')), reason);
    const row = (await findWorkspace(cli.db.kysely, ws.id))!;
    assert.deepEqual(
      [row.name, row.reply_to, row.brand_color, row.logo_blob],
      ['Strict Co', null, null, null],
      'nothing was saved',
    );
    assert.match(
      oneErrorLine(await cli.signet(['workspace', 'update', 'ws_nope', '--name', 'X']), 'unknown'),
      /no workspace ws_nope/,
    );
    const rows = await cli.db.kysely.selectFrom('audit_log').select('id').where('workspace_id', '=', ws.id).execute();
    assert.equal(rows.length, 0, 'no audit rows');
    assert.match(
      oneErrorLine(await cli.signet(['workspace', 'create', '--name', 'X', '--reply-to', 'nope']), 'create'),
      /--reply-to "nope" is not a plain e-mail address/,
    );
  });
});

describe('the Reply-To set by signet workspace update is the next invitation’s', () => {
  test('an invitation after the change carries the new Reply-To', async () => {
    const e = await startE2E();
    try {
      const send = async (email: string) => {
        const r = await e.api('POST', '/v1/signing-requests', {
          signers: [{ role: 'a', email, name: 'S' }],
          file: { name: 'a.pdf', content_base64: b64(await makePdf({ text: [['Agreement']] })) },
          placement: 'auto_append',
        });
        assert.equal(r.status, 201, r.text);
        await e.work();
      };
      const replyToOf = async (email: string) => {
        const mail = (await e.smtp.parsed()).find(
          (m) => m.to && !Array.isArray(m.to) && m.to.value[0]?.address === email,
        );
        assert.ok(mail, `a mail to ${email}`);
        return mail.replyTo?.value.map((v) => v.address) ?? [];
      };
      await send('before@example.com');
      assert.deepEqual(await replyToOf('before@example.com'), []);
      const r = await runSignet(e.h.config.dataDir, [
        'workspace',
        'update',
        e.workspaceId,
        '--reply-to',
        'desk@acme.example',
      ]);
      assert.equal(r.code, 0, r.stderr);
      await send('after@example.com');
      assert.deepEqual(await replyToOf('after@example.com'), ['desk@acme.example']);
    } finally {
      await e.close();
    }
  });
});
