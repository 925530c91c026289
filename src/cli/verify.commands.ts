// `signet verify FILE`: the verification report of POST /v1/verifications, offline, in this process. Trusts the
// local CA when this machine has one (DATA_DIR/pki) and names the Signet document when this database sealed it.
import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { systemClock } from '../lib/clock.js';
import { ApiError } from '../lib/errors.js';
import { isKnownLocale, KNOWN_LOCALES, type Locale } from '../i18n/i18n.js';
import { CliError, config, print, withDb } from './context.js';

/** Exit codes: 0 valid, 1 a command error, 2 invalid, 3 indeterminate. */
const EXIT = { valid: 0, invalid: 2, indeterminate: 3 } as const;

export function addVerifyCommands(program: Command): void {
  program
    .command('verify')
    .description('verify a signed PDF offline: signatures, timestamps, PAdES level, changes after signing')
    .argument('<file>', 'the PDF')
    .option('--json', 'print the report as JSON (the `verification` object of POST /v1/verifications)')
    .option('--locale <tag>', `language of the problems (${KNOWN_LOCALES.join(', ')})`, 'en')
    .action(async (file: string, o: { json?: boolean; locale: string }) => {
      if (!isKnownLocale(o.locale)) throw new CliError(`unknown locale "${o.locale}"`);
      const bytes = await readFile(file).catch((err: NodeJS.ErrnoException) => {
        throw new CliError(`cannot read ${file}: ${err.code ?? err.message}`);
      });
      const [{ verifyFile }, { pdfEngine }, { closePdfWorkers }, trust] = await Promise.all([
        import('../verification/verification.service.js'),
        import('../documents/pdf/engine.js'),
        import('../documents/pdf/pool.js'),
        localTrust(),
      ]);
      try {
        const report = await withDb((db) =>
          verifyFile({ db, clock: systemClock, pdf: pdfEngine, trust }, new Uint8Array(bytes), o.locale as Locale),
        );
        print(!!o.json, report, human(report));
        process.exitCode = EXIT[report.verdict];
      } catch (err) {
        if (err instanceof ApiError) throw new CliError(`${err.message} (${err.code})`);
        throw err;
      } finally {
        await closePdfWorkers();
      }
    });
}

async function localTrust() {
  const [{ createTrustStore, NO_TRUST }, pki, secrets] = await Promise.all([
    import('../pki/trust.js'),
    import('../pki/pki.js'),
    import('../secrets/keyring.js'),
  ]);
  if ((await pki.generationNumbers(config.dataDir)).length === 0) return NO_TRUST;
  // The CAs' CRL keys are read with them: encrypted at rest, they need the configured key.
  const keyring = await secrets.configuredKeyring(config);
  return createTrustStore({
    clock: systemClock,
    loadCas: () => pki.loadOrCreateCas({ dataDir: config.dataDir, clock: systemClock, keyring }),
    generationNumbers: () => pki.generationNumbers(config.dataDir),
  });
}

type Report = Awaited<ReturnType<typeof import('../verification/verification.service.js').verifyFile>>;

function human(r: Report): string {
  const lines = [`verdict: ${r.verdict}`, `PAdES level: ${r.pades_level ?? 'none'}`];
  lines.push(`modified after signing: ${r.modified_after_signing ? 'yes' : 'no'}`);
  if (r.document?.purged_at)
    lines.push(
      `Signet document: ${r.document.id}, sealed by this service; its record was purged on ${r.document.purged_at}`,
    );
  else if (r.document)
    lines.push(
      `Signet document: ${r.document.id} “${r.document.title}” (audit chain ${r.document.audit_chain_valid ? 'verifies' : 'BROKEN'})`,
    );
  for (const p of r.problems) lines.push(`  ! ${p}`);
  for (const s of r.signatures) {
    lines.push(
      `${s.kind === 'signature' ? 'signature' : 'document timestamp'} "${s.field}": ${s.intact ? 'intact' : 'NOT INTACT'}, ${s.trusted ? 'trusted' : 'not trusted'}, ${s.signer?.subject ?? 'no signer'}, ${s.signed_at ?? 'no time'}${s.time_proven ? ' (timestamped)' : ''}`,
    );
    for (const p of s.problems) lines.push(`  ! ${p}`);
  }
  return lines.join('\n');
}
