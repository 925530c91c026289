// The service process: open the database, build the app, listen, run the worker. SIGTERM stops accepting,
// drains in-flight requests and deliveries, closes the database and exits 0.
import os from 'node:os';
import { randomBytes } from 'node:crypto';
import pino from 'pino';
import type { Config } from './config.js';
import { redactUrl } from './config.js';
import { openDb } from './db/db.js';
import { systemClock, type Clock } from './lib/clock.js';
import { buildApp } from './app.js';
import { createRateLimiter } from './ratelimit/ratelimit.js';
import { createDispatcher } from './webhooks/dispatcher.js';
import { createScheduler } from './jobs/jobs.js';

export const workerId = (): string => `${os.hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;

export function createLogger(config: Config) {
  return pino({
    level: config.logLevel,
    redact: { paths: ['req.headers.authorization', '*.secret', '*.plaintext', 'secret', 'plaintext'], censor: '[redacted]' },
  });
}

export async function runServer(config: Config, opts: { worker: boolean; api: boolean; clock?: Clock }): Promise<void> {
  const clock = opts.clock ?? systemClock;
  const logger = createLogger(config);
  const db = await openDb(config.databaseUrl);
  const dispatcher = opts.worker
    ? createDispatcher({ db, clock, workerId: workerId(), allowPrivateNetwork: config.allowPrivateNetwork, logger })
    : null;
  const scheduler = opts.worker ? createScheduler({ db, clock, workerId: workerId(), logger }) : null;
  const limiter = createRateLimiter({ redisUrl: config.redisUrl, clock, logger });
  const app = opts.api
    ? await buildApp({ config, db, clock, limiter, logger, wakeDispatcher: () => dispatcher?.wake() })
    : null;

  if (app) {
    await app.listen({ port: config.port, host: config.host });
    logger.info(
      { baseUrl: config.baseUrl, database: redactUrl(config.databaseUrl).replace(/^sqlite:.*/, 'sqlite'), redis: Boolean(config.redisUrl) },
      'signet listening',
    );
  }
  dispatcher?.start();
  scheduler?.start();

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'draining');
    try {
      await Promise.all([app?.close(), dispatcher?.stop(), scheduler?.stop()]);
      await limiter.close();
      await db.close();
      logger.info('stopped');
      process.exit(0);
    } catch (err) {
      logger.error({ err }, 'shutdown failed');
      process.exit(1);
    }
  };
  process.once('SIGTERM', () => void stop('SIGTERM'));
  process.once('SIGINT', () => void stop('SIGINT'));
}
