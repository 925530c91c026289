// `node scripts/test-pg-template.mjs drop NAME`: removes a test run's PostgreSQL template (src/testing/services.ts)
// and any left by runs that were cut off more than six hours ago. Quiet and successful when PostgreSQL is not there:
// the suite then skips its PostgreSQL half (or fails on its own under CI).
import pg from 'pg';

const [, , command, name] = process.argv;
if (command !== 'drop' || !/^signet_tpl_\d+_\w+$/.test(name ?? '')) {
  console.error('usage: node scripts/test-pg-template.mjs drop signet_tpl_<epoch>_<tag>');
  process.exit(2);
}
const c = new pg.Client(process.env.DATABASE_URL_TEST || 'postgres://postgres@127.0.0.1:5432/postgres');
try {
  await c.connect();
} catch {
  process.exit(0);
}
const stale = Math.floor(Date.now() / 1000) - 6 * 3600;
const r = await c.query(`SELECT datname FROM pg_database WHERE datname LIKE 'signet\\_tpl\\_%'`);
for (const { datname } of r.rows) {
  const epoch = Number(/^signet_tpl_(\d+)_/.exec(datname)?.[1] ?? Infinity);
  if (datname === name || datname === `${name}_building` || epoch < stale)
    await c.query(`DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`).catch(() => undefined);
}
await c.end();
