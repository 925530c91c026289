// Runs the local CSC provider for demos on one machine:
//   node --import tsx src/qes/testing/csc-provider.main.ts [user ...]
// It prints the QES_* variables for Signet; each line typed on stdin (a user name, or empty for the first user)
// prints a fresh one-time login code, and `fail <switch>` / `fail off` sets the failure switch.
import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { startCscProvider, type CscFailure } from './csc-provider.js';

const SWITCHES: CscFailure[] = ['cancel', 'token_refused', 'down', 'expired_cert', 'revoked_cert', 'not_qualified', 'bad_signature']; // prettier-ignore
const users = process.argv.slice(2);
const provider = await startCscProvider(users.length ? { users } : {});
const caFile = path.join(await mkdtemp(path.join(os.tmpdir(), 'signet-qtsp-')), 'ca.pem');
await writeFile(caFile, provider.caPem);
console.log(`QES_PROVIDER_URL=${provider.cscUrl}`);
console.log(`QES_CLIENT_ID=${provider.clientId}`);
console.log(`QES_CLIENT_SECRET=${provider.clientSecret}`);
console.log(`QES_CA_FILE=${caFile}`);
console.log('Enter a user name (or nothing) for a login code; "fail <switch>" or "fail off"; Ctrl-D stops.');

const lines = createInterface({ input: process.stdin });
lines.on('line', (line) => {
  const [word = '', arg] = line.trim().split(/\s+/);
  try {
    if (word === 'fail' && arg !== 'off' && !SWITCHES.includes(arg as CscFailure)) console.log(SWITCHES.join(' '));
    else if (word === 'fail') provider.fail = arg === 'off' ? null : (arg as CscFailure);
    else console.log(`login code: ${provider.loginCode(word || undefined)}`);
  } catch (err) {
    console.log((err as Error).message);
  }
});
lines.on('close', () => void provider.close());
