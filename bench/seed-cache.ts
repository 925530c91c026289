// `node --import tsx bench/seed-cache.ts drop`: removes the seeded histories kept for the query-plan test and
// bench:scale (src/testing/seed/cache.ts), on disk and in PostgreSQL. .ci/run calls it at its end.
import { dropSeedCache } from '../src/testing/seed/cache.js';
import { postgresForTests } from '../src/testing/services.js';

if (process.argv[2] !== 'drop') {
  console.error('usage: node --import tsx bench/seed-cache.ts drop');
  process.exit(2);
}
const pg = await postgresForTests();
const gone = await dropSeedCache('url' in pg ? pg.url : undefined);
console.log(`seed cache: dropped ${gone.length ? gone.join(', ') : 'nothing'}`);
