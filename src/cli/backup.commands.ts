// `signet backup --to FILE` and `signet restore FILE` (src/backup/): DATA_DIR to one archive while the server runs,
// and back into an empty DATA_DIR.
import path from 'node:path';
import type { Command } from 'commander';
import { systemClock } from '../lib/clock.js';
import { CliError, config, print } from './context.js';

export function addBackupCommands(program: Command): void {
  program
    .command('backup')
    .description('write one archive of the database (SQLite), blobs and PKI while the server keeps running')
    .requiredOption('--to <file>', 'the archive to write (.tar.gz); must not exist')
    .option('--json', 'print JSON')
    .action(async (o: { to: string; json?: boolean }) => {
      const { runBackup } = await import('../backup/backup.js');
      const s = await runBackup({
        dataDir: config.dataDir,
        databaseUrl: config.databaseUrl,
        to: path.resolve(o.to),
        clock: systemClock,
      }).catch((err: Error) => {
        throw new CliError(`backup failed: ${err.message}`);
      });
      // Files the configuration names are the operator's to keep (they may live anywhere).
      if (config.sealP12) s.not_covered.push(`SEAL_P12 ${config.sealP12} and SEAL_P12_PASSWORD: keep a copy`);
      if (config.tsaCaFile) s.not_covered.push(`TSA_CA_FILE ${config.tsaCaFile}: keep a copy`);
      const what = s.counts
        ? `a snapshot of ${s.counts.documents} documents and ${s.counts.audit_events} audit events, ${s.blobs} blobs, `
        : '';
      print(
        !!o.json,
        s,
        [
          `wrote ${s.file} (${s.bytes} bytes): ${what}${s.pki_files} PKI files`,
          ...s.not_covered.map((n) => `not in this archive: ${n}`),
          ...s.skipped.map((n) => `left out (Signet does not read it): DATA_DIR/${n}`),
        ].join('\n'),
      );
    });

  program
    .command('restore')
    .description('restore a `signet backup` archive into an empty DATA_DIR (verified before anything is written)')
    .argument('<file>', 'the archive')
    .option('--json', 'print JSON')
    .action(async (file: string, o: { json?: boolean }) => {
      const { runRestore } = await import('../backup/restore.js');
      const s = await runRestore({
        archive: path.resolve(file),
        dataDir: config.dataDir,
        databaseUrl: config.databaseUrl,
      }).catch((err: Error) => {
        throw new CliError(`restore refused: ${err.message}`);
      });
      const what = s.counts ? `: ${s.counts.documents} documents, ${s.counts.audit_events} audit events` : '';
      print(
        !!o.json,
        s,
        [
          `restored ${s.entries} files from the backup of ${s.created_at} into ${s.data_dir}${what}`,
          ...s.not_covered.map((n) => `still to restore: ${n}`),
        ].join('\n'),
      );
    });
}
