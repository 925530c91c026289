// `signet secrets rotate`: every stored secret (webhook secrets, the PKI's key files) under a new master key.
import type { Command } from 'commander';
import { config, print, withDb } from './context.js';

export function addSecretsCommands(program: Command): void {
  program
    .command('secrets')
    .description('secrets at rest (webhook secrets, PKI private keys)')
    .command('rotate')
    .description(
      're-encrypt every stored secret under a new key; stop Signet first. With SIGNET_SECRET_KEY, give the new key ' +
        'with --new-key-file and then set SIGNET_SECRET_KEY to it; on the SQLite default a new key is generated ' +
        'into DATA_DIR/secret.key',
    )
    .option('--new-key-file <path>', 'a file holding the new key: 32 bytes, base64 or hex')
    .option('--json', 'print JSON')
    .action(async (o: { newKeyFile?: string; json?: boolean }) => {
      const { rotateSecrets } = await import('../secrets/rotate.js');
      const r = await withDb((db) => rotateSecrets(config, db, o.newKeyFile ?? null));
      const next = r.key_file
        ? `the new key is in ${r.key_file}`
        : 'now set SIGNET_SECRET_KEY to the new key and start Signet';
      print(
        !!o.json,
        r,
        `re-encrypted ${r.hooks} webhook secrets and ${r.key_files} key files under key ${r.key_id} ` +
          `(was ${r.previous_key_id}); ${next}`,
      );
    });
}
