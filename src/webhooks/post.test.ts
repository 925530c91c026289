// One webhook POST by callbacks (post.ts) against a real local receiver: the status and a capped body; a receiver
// that never answers, and a request still queued for a connection, both end as timeouts at their deadline; and once
// nothing is open no timer of the poster is left to keep a process (a CLI run) alive.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent } from 'undici';
import { createPoster } from './post.js';

describe('webhook POST by callbacks', () => {
  let server: http.Server;
  let base: string;
  const hung: http.ServerResponse[] = [];
  before(async () => {
    server = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        if (req.url === '/hang') return void hung.push(res);
        if (req.url === '/big') return res.end('é'.repeat(5000));
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    for (const r of hung) r.destroy();
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  const timers = () => process.getActiveResourcesInfo().filter((x) => x === 'Timeout').length;

  test('the status, the body cut at `limit` bytes (never inside a character), and no timer left behind', async () => {
    const agent = new Agent();
    try {
      const before = timers();
      const poster = createPoster(agent, 10_000, 101);
      const big = await poster.post(`${base}/big`, { 'content-type': 'application/json' }, '{}');
      assert.equal(big.statusCode, 200);
      assert.equal(big.body, 'é'.repeat(50), '101 bytes: 50 two-byte characters, the half one dropped');
      const empty = await poster.post(`${base}/ok`, {}, '{}');
      assert.deepEqual([empty.statusCode, empty.body, empty.error], [204, '', null]);
      assert.equal(poster.inFlight, 0);
      assert.equal(timers(), before, 'the deadline timer is gone once nothing is open');
    } finally {
      await agent.close();
    }
  });

  test('no answer, or no connection to send on, ends as a timeout at the deadline', async () => {
    const agent = new Agent({ connections: 1 });
    try {
      const poster = createPoster(agent, 300, 100);
      const t0 = performance.now();
      const [first, queued] = await Promise.all([
        poster.post(`${base}/hang`, {}, '{}'),
        poster.post(`${base}/ok`, {}, '{}'), // waits behind the first for the one connection
      ]);
      const took = performance.now() - t0;
      assert.equal(first.timedOut, true);
      assert.equal(first.statusCode, null);
      assert.equal(queued.timedOut, true, 'still queued at its deadline: a timeout too');
      assert.ok(took >= 290 && took < 3000, `ended at the deadline (${took.toFixed(0)} ms)`);
      assert.equal(poster.inFlight, 0);
    } finally {
      await agent.destroy();
    }
  });
});
