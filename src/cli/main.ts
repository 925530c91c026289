// The `signet` operator CLI. Every command reads configuration from the environment (config.ts), prints one JSON
// object with --json, and fails with one line on stderr and a non-zero exit. Secrets are printed only at creation.
// The commands live by group in *.commands.ts; they are registered here in the order `signet --help` lists them.
import { Command, CommanderError } from 'commander';
import { ConfigError, loadConfig } from '../config.js';
import { CliError, setConfig } from './context.js';
import { addJobCommands, addPkiCommands, addServerCommands } from './server.commands.js';
import { addTemplateCommands, addUserCommands, addWorkspaceCommands } from './workspaces.commands.js';
import { addKeyCommands } from './keys.commands.js';
import { addVerifyCommands } from './verify.commands.js';
import { addWebhookCommands } from './webhooks.commands.js';
import { addMailCommands, addSmsCommands } from './outbox.commands.js';
import { addBackupCommands } from './backup.commands.js';
import { addSecretsCommands } from './secrets.commands.js';

const program = new Command('signet').description('Signet e-signature service').exitOverride();
addServerCommands(program);
addWorkspaceCommands(program);
addKeyCommands(program);
addUserCommands(program);
addWebhookCommands(program);
addPkiCommands(program);
addSecretsCommands(program);
addMailCommands(program);
addTemplateCommands(program);
addSmsCommands(program);
addJobCommands(program);
addVerifyCommands(program);
addBackupCommands(program);

try {
  setConfig(loadConfig());
  await program.parseAsync(process.argv);
} catch (err) {
  if (err instanceof CommanderError) {
    process.exit(err.exitCode === 0 ? 0 : 2);
  }
  if (err instanceof ConfigError || err instanceof CliError) {
    console.error(`signet: ${err.message}`);
    process.exit(1);
  }
  console.error(`signet: ${(err as Error).message}`);
  process.exit(1);
}
