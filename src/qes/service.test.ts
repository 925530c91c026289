// Start-up with a configured provider: an unusable one stops it with one line naming what is wrong (ConfigError);
// a usable one is discovered through `info` (its name and OAuth 2.0 endpoints).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { ConfigError, loadConfig } from '../config.js';
import { ManualClock } from '../lib/clock.js';
import { freePort } from '../testing/harness.js';
import { createQesService } from './service.js';
import { startCscProvider, type CscProvider } from './testing/csc-provider.js';

let provider: CscProvider;
let dir: string;
before(async () => {
  provider = await startCscProvider();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-qes-svc-'));
  fs.writeFileSync(path.join(dir, 'ca.pem'), provider.caPem);
  fs.writeFileSync(path.join(dir, 'empty.pem'), 'no certificate here\n');
});
after(async () => {
  await provider?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const env = (o: Record<string, string> = {}) =>
  loadConfig({
    SIGNET_ALLOW_PRIVATE_NETWORK: '1',
    QES_PROVIDER_URL: provider.cscUrl,
    QES_CLIENT_ID: provider.clientId,
    QES_CLIENT_SECRET: provider.clientSecret,
    QES_CA_FILE: path.join(dir, 'ca.pem'),
    ...o,
  });
const noTsa = async () => {
  throw new Error('not used at start');
};
const start = (o?: Record<string, string>) => createQesService(env(o), new ManualClock(), noTsa);

test('a usable provider: its name and OAuth 2.0 endpoints from info, its CA as the anchor', async () => {
  const s = (await start())!;
  try {
    assert.equal(s.name, 'Test QTSP');
    const info = await s.info();
    assert.equal(info.authorizeUrl, `${provider.url}/oauth2/authorize`);
    assert.equal(info.tokenUrl, `${provider.url}/oauth2/token`);
    assert.equal(s.anchorsDer.length, 1);
  } finally {
    await s.close();
  }
});

test('an unusable configuration stops start-up with one line naming it', async () => {
  const oneLine = (re: RegExp) => (e: unknown) =>
    e instanceof ConfigError && !e.message.includes('\n') && re.test(e.message);
  await assert.rejects(start({ QES_CA_FILE: path.join(dir, 'missing.pem') }), oneLine(/^QES_CA_FILE: cannot read/));
  await assert.rejects(start({ QES_CA_FILE: path.join(dir, 'empty.pem') }), oneLine(/holds no PEM certificate/));
  const closed = `http://127.0.0.1:${await freePort()}/csc/v2`;
  await assert.rejects(start({ QES_PROVIDER_URL: closed }), oneLine(/^QES_PROVIDER_URL: .*could not be reached/));
  provider.fail = 'down';
  try {
    await assert.rejects(start(), oneLine(/^QES_PROVIDER_URL: .*answered 503/));
  } finally {
    provider.fail = null;
  }
});
