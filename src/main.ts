// The service process: build the runtime, listen, run the worker. SIGTERM stops accepting, drains in-flight
// requests, deliveries, mail and sealing, closes the database and exits 0. With TLS, SIGHUP reloads the
// certificate for new connections.
import type { Server } from 'node:https';
import pino from 'pino';
import type { Config } from './config.js';
import { redactUrl } from './config.js';
import { createTlsReloader, loadTls, plainHttpExposure } from './http/tls.js';
import type { Clock } from './lib/clock.js';
import { createRuntime } from './runtime.js';

export function createLogger(config: Config) {
  return pino({
    level: config.logLevel,
    redact: {
      paths: ['req.headers.authorization', '*.secret', '*.plaintext', 'secret', 'plaintext', '*.token', 'token'],
      censor: '[redacted]',
    },
    serializers: { req: logRequest },
  });
}

/**
 * A request as the log shows it. Signer, embed, review and set-password links carry their credential in the path;
 * the qualified provider's redirect carries an authorization code and state in its query.
 */
export const logRequest = (req: { method: string; url: string }) => ({
  method: req.method,
  url: req.url
    .replace(/^\/(sign|embed\/sign|review|dashboard\/set-password)\/[^/?]+/, '/$1/[token]')
    .replace(/^\/qes\/callback\?.*/, '/qes/callback?[redacted]'),
});

export async function runServer(config: Config, opts: { worker: boolean; api: boolean; clock?: Clock }): Promise<void> {
  const logger = createLogger(config);
  // Unusable certificate files stop start-up before the database is opened or migrated.
  if (opts.api && config.tls) await loadTls(config.tls);
  const rt = await createRuntime(config, { api: opts.api, worker: opts.worker, clock: opts.clock, logger });
  if (rt.app) {
    await rt.app.listen({ port: config.port, host: config.host });
    logger.info(
      {
        baseUrl: config.baseUrl,
        database: redactUrl(config.databaseUrl).replace(/^sqlite:.*/, 'sqlite'),
        redis: Boolean(config.redisUrl),
        smtp: Boolean(config.smtpUrl),
        tls: Boolean(config.tls),
      },
      'signet listening',
    );
    const exposure = plainHttpExposure(config);
    if (exposure) logger.warn(exposure);
    if (config.tls) reloadOnHangup(createTlsReloader(rt.app.server as Server, config.tls), logger);
  }
  rt.start();
  // The job loops' timers are unref'd and SQLite holds no socket: without this a worker-only process on SQLite
  // would find its event loop empty and exit at once. Cleared when stopping.
  const keepAlive = rt.app ? undefined : setInterval(() => {}, 1 << 30);
  if (!rt.app)
    logger.info({ database: redactUrl(config.databaseUrl).replace(/^sqlite:.*/, 'sqlite') }, 'signet worker running');

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    clearInterval(keepAlive);
    logger.info({ signal }, 'draining');
    try {
      await rt.close();
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

function reloadOnHangup(reload: ReturnType<typeof createTlsReloader>, logger: ReturnType<typeof createLogger>) {
  process.on('SIGHUP', () => {
    reload().then(
      (m) => logger.info({ subject: m.subject, validTo: m.validTo }, 'tls certificate reloaded'),
      (err: Error) =>
        logger.error(
          { reason: err.message.split('\n')[0] },
          'tls certificate not reloaded; the previous one stays in use',
        ),
    );
  });
}
