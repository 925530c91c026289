// `signet deliveries list|replay` and `hooks test`: any workspace's webhook deliveries, `--now` delivering here.
import type { Command } from 'commander';
import type { Db } from '../db/db.js';
import { systemClock } from '../lib/clock.js';
import { findHookAnyWorkspace } from '../webhooks/hooks.repo.js';
import { DELIVERY_FILTERS } from '../webhooks/hooks.schemas.js';
import { createEmitter } from '../webhooks/outbox.repo.js';
import { CliError, config, print, withDb } from './context.js';

// The service (and the HTTP client it brings) is loaded by the commands that run, not by every `signet` start.
const service = () => import('../webhooks/hooks.service.js');

/** Sends due deliveries from this process, for operators who run no worker while testing a hook. */
async function deliverNow(db: Db): Promise<number> {
  const [{ createDispatcher }, { newWorkerId: workerId }, { prepareSecrets }] = await Promise.all([
    import('../webhooks/dispatcher.js'),
    import('../runtime.js'),
    import('../secrets/keyring.js'),
  ]);
  const d = createDispatcher({
    db,
    clock: systemClock,
    workerId: workerId(),
    allowPrivateNetwork: config.allowPrivateNetwork,
    keyring: await prepareSecrets(config, db),
  });
  const n = await d.runOnce();
  await d.stop();
  return n;
}

export function addWebhookCommands(program: Command): void {
  const deliveries = program.command('deliveries').description('webhook deliveries');
  deliveries
    .command('list')
    .option('--hook <id>', 'only this hook')
    .option('--workspace <id>', 'only this workspace')
    .option('--status <status>', `only this state: ${DELIVERY_FILTERS.join('|')} (failed = retrying and giving_up)`)
    .option('--limit <n>', 'at most n rows', '50')
    .option('--json', 'print JSON')
    .action(async (o: { hook?: string; workspace?: string; status?: string; limit: string; json?: boolean }) => {
      if (o.status !== undefined && !(DELIVERY_FILTERS as readonly string[]).includes(o.status))
        throw new CliError(`--status must be one of ${DELIVERY_FILTERS.join('|')}`);
      const { deliveryStatuses, listDeliveries } = await service();
      const statuses = deliveryStatuses(o.status);
      const rows = await withDb((db) =>
        listDeliveries(db, { hookId: o.hook, workspaceId: o.workspace, statuses, limit: Number(o.limit) || 50 }),
      );
      print(
        !!o.json,
        { deliveries: rows },
        rows
          .map(
            (d) =>
              `${d.id}\t${d.event}\t${d.status}\tattempts ${d.attempts}\tnext ${d.next_attempt_at ?? '-'}` +
              (d.last_error ? `\t${d.last_error}` : ''),
          )
          .join('\n') || '(none)',
      );
    });

  deliveries
    .command('replay <deliveryId>')
    .description('send the event again to the same hook (same event_id), as a new delivery; not for a deleted hook')
    .option('--now', 'deliver from this process instead of waiting for the worker')
    .option('--json', 'print JSON')
    .action(async (id: string, o: { now?: boolean; json?: boolean }) => {
      const { getDelivery, replayDelivery } = await service();
      const d = await withDb(async (db) => {
        // The API's replay (hooks.service.ts), unscoped: an operator may replay any workspace's delivery.
        const replayed = await replayDelivery({ db, clock: systemClock, wakeDeliveries: () => undefined }, id);
        if (!replayed) {
          if (await getDelivery(db, id)) throw new CliError(`the hook of delivery ${id} is deleted; nothing replayed`);
          throw new CliError(`no delivery ${id}`);
        }
        if (o.now) await deliverNow(db);
        return (await getDelivery(db, replayed.delivery_id))!;
      });
      print(!!o.json, { delivery: d }, `${d.id}\t${d.status}`);
    });

  program
    .command('hooks')
    .description('webhooks')
    .command('test <hookId>')
    .description("send the synthetic test event, signed with the hook's secret")
    .option('--now', 'deliver from this process instead of waiting for the worker')
    .option('--json', 'print JSON')
    .action(async (hookId: string, o: { now?: boolean; json?: boolean }) => {
      const { sendTestEvent } = await service();
      const out = await withDb(async (db) => {
        const hook = await findHookAnyWorkspace(db.kysely, hookId);
        if (!hook) throw new CliError(`no hook ${hookId}`);
        const r = await sendTestEvent(
          { db, clock: systemClock, emit: createEmitter(systemClock), wakeDeliveries: () => undefined },
          hook.workspace_id,
          hook.id,
        );
        if (o.now) await deliverNow(db);
        return r;
      });
      print(!!o.json, { event_id: out.eventId, hook_id: hookId }, `queued ${out.eventId} for ${hookId}`);
    });
}
