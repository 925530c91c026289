// One webhook POST by callbacks (post.ts) against a real local receiver: the status and a capped body; a receiver
// that never answers, and a request still queued for a connection, both end as timeouts at their deadline; and once
// nothing is open no timer of the poster is left to keep a process (a CLI run) alive.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent } from 'undici';
import { createPoster, utf8Prefix } from './post.js';

test('a body prefix keeps whole characters only, as a streaming decoder would', () => {
  // One-, two-, three- and four-byte characters, an invalid byte and a lone continuation byte, cut at every length.
  const bytes = Buffer.concat([
    Buffer.from('aé€😀b€😀', 'utf8'),
    Buffer.from([0xff, 0x80, 0xe0, 0x80, 0xed, 0xa0, 0xf4, 0x90, 0xf0, 0x9f, 0x98, 0xc1]),
    Buffer.from('é😀'),
  ]);
  for (let from = 0; from < bytes.length; from++) {
    for (let limit = 0; limit <= bytes.length - from + 1; limit++) {
      const tail = bytes.subarray(from);
      const expected = new TextDecoder().decode(tail.subarray(0, limit), { stream: true }).slice(0, limit);
      assert.equal(utf8Prefix(tail, limit), expected, `from ${from}, limit ${limit}`);
    }
  }
  assert.equal(utf8Prefix(Buffer.from('😀😀'), 6), '😀', 'a character cut in half at the end is left out');
});

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

  test('no answer ends as a timeout at the deadline; so does a request still queued for a connection', async () => {
    const agent = new Agent({ connections: 1 });
    try {
      // The hung request holds the one connection well past the queued one's deadline, so the queued one is still
      // waiting when its own deadline comes (same timeouts would let it through once the first is aborted).
      const holder = createPoster(agent, 2000, 100);
      const poster = createPoster(agent, 300, 100);
      const t0 = performance.now();
      const hanging = holder.post(`${base}/hang`, {}, '{}');
      const queued = await poster.post(`${base}/ok`, {}, '{}');
      const tookQueued = performance.now() - t0;
      assert.equal(queued.timedOut, true, 'still queued at its deadline: a timeout');
      assert.equal(queued.statusCode, null);
      assert.ok(tookQueued >= 290 && tookQueued < 1900, `ended at its deadline (${tookQueued.toFixed(0)} ms)`);
      assert.equal(poster.inFlight, 0);
      const first = await hanging;
      const took = performance.now() - t0;
      assert.equal(first.timedOut, true);
      assert.equal(first.statusCode, null);
      assert.ok(took >= 1990 && took < 5000, `the hung one ended at its deadline (${took.toFixed(0)} ms)`);
      assert.equal(holder.inFlight, 0);
    } finally {
      await agent.destroy();
    }
  });
});
