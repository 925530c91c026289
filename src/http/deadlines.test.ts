// Slow and silent clients against the real server on a loopback port, with the timeouts set short: each is closed
// within its timeout plus a small margin (Node checks its own timeouts every 250 ms here), with the catalogue's 408
// where an answer can still be written, while ordinary requests keep being answered.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { startHarness, type Harness } from '../testing/harness.js';
import { LINGER_MS } from './deadlines.js';

const HEADERS_MS = 1000;
const REQUEST_MS = 1500;
const UPLOAD_MS = 3500;
const KEEP_ALIVE_MS = 1000;
const MARGIN_MS = 700;

type Outcome = { closedAfterMs: number; response: string };

/** Opens a raw connection, runs `drive` on it, and resolves when the server closes it (or after `giveUpMs`). */
function rawClient(port: number, drive: (s: net.Socket) => void, giveUpMs = 15_000): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const s = net.connect(port, '127.0.0.1');
    let response = '';
    const giveUp = setTimeout(() => {
      s.destroy();
      reject(new Error(`still open after ${giveUpMs} ms; got ${JSON.stringify(response)}`));
    }, giveUpMs);
    s.setEncoding('utf8');
    s.on('data', (d: string) => (response += d));
    s.on('error', () => undefined);
    s.on('close', () => {
      clearTimeout(giveUp);
      resolve({ closedAfterMs: Date.now() - started, response });
    });
    s.on('connect', () => drive(s));
  });
}

/** Writes `text` one byte at a time every `everyMs` until the socket closes. */
function trickle(s: net.Socket, text: string, everyMs: number): void {
  let i = 0;
  const t = setInterval(() => {
    if (s.destroyed || i >= text.length) return clearInterval(t);
    s.write(text[i++]!);
  }, everyMs);
  s.once('close', () => clearInterval(t));
}

const bodyOf = (response: string) => JSON.parse(response.slice(response.indexOf('\r\n\r\n') + 4)) as { code: string };
const statusOf = (response: string) => Number(/^HTTP\/1\.1 (\d{3})/.exec(response)?.[1]);

describe('timeouts against slow clients', () => {
  let h: Harness;
  let token: string;
  before(async () => {
    h = await startHarness({
      env: {
        HEADERS_TIMEOUT_MS: String(HEADERS_MS),
        REQUEST_TIMEOUT_MS: String(REQUEST_MS),
        UPLOAD_TIMEOUT_MS: String(UPLOAD_MS),
        KEEP_ALIVE_TIMEOUT_MS: String(KEEP_ALIVE_MS),
        IDLE_SOCKET_TIMEOUT_MS: '10000',
      },
    });
    token = (await h.tenant('business')).token;
  });
  after(() => h.close());

  const head = (path: string, length: number, auth = token) =>
    `POST ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${auth}\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`;

  test('headers, then a body trickling one byte at a time: 408 request_timeout, closed at the request timeout', async () => {
    const [slow, me] = await Promise.all([
      rawClient(h.port, (s) => {
        s.write(head('/v1/hooks', 1000));
        trickle(s, `{"target_url":"https://example.com/${'x'.repeat(960)}"}`, 100);
      }),
      // Meanwhile the server keeps answering everyone else.
      (async () => {
        await new Promise((r) => setTimeout(r, 300));
        return h.request('GET', '/v1/me', { token });
      })(),
    ]);
    assert.equal(me.status, 200);
    assert.equal(statusOf(slow.response), 408, slow.response);
    assert.equal(bodyOf(slow.response).code, 'request_timeout');
    assert.match(slow.response, /\r\nconnection: close\r\n/i);
    assert.ok(slow.closedAfterMs >= REQUEST_MS - 50, `closed after ${slow.closedAfterMs} ms`);
    assert.ok(slow.closedAfterMs <= REQUEST_MS + MARGIN_MS, `closed after ${slow.closedAfterMs} ms`);
  });

  test('a route that takes a file gets the upload timeout instead', async () => {
    const slow = await rawClient(h.port, (s) => {
      s.write(head('/v1/signing-requests', 100_000));
      trickle(s, '{"signers":['.padEnd(100_000, ' '), 100);
    });
    assert.equal(statusOf(slow.response), 408, slow.response);
    assert.equal(bodyOf(slow.response).code, 'request_timeout');
    assert.ok(slow.closedAfterMs >= UPLOAD_MS - 50, `closed after ${slow.closedAfterMs} ms`);
    assert.ok(slow.closedAfterMs <= UPLOAD_MS + MARGIN_MS, `closed after ${slow.closedAfterMs} ms`);
  });

  test('a body refused unread (401, 413) cannot hold the connection: it closes once the answer is out', async () => {
    const refused = await Promise.all([
      rawClient(h.port, (s) => {
        s.write(head('/v1/hooks', 1000, `svk_live_${'0'.repeat(32)}`));
        trickle(s, 'x'.repeat(1000), 100);
      }),
      // Declared over the 1 MB default body limit, and never sent.
      rawClient(h.port, (s) => s.write(head('/v1/hooks', 2 * 1024 * 1024))),
    ]);
    assert.deepEqual(
      refused.map((r) => statusOf(r.response)),
      [401, 413],
    );
    for (const r of refused) {
      assert.match(r.response, /\r\nconnection: close\r\n/i);
      assert.ok(r.closedAfterMs < MARGIN_MS, `closed after ${r.closedAfterMs} ms`);
    }
  });

  test('a client still sending a refused body reads its answer, not a reset (lingering close)', async () => {
    // A 32 MB body written at once: most of it is still on its way when the 401 goes out. Closing the socket with
    // that unread makes the kernel answer the rest with a reset, which can discard the 401 before the client reads it.
    const body = Buffer.alloc(32 * 1024 * 1024, 0x78);
    const outcomes = await Promise.all(
      Array.from({ length: 4 }, () => {
        let failed: string | undefined;
        return rawClient(h.port, (s) => {
          s.on('error', (e: NodeJS.ErrnoException) => (failed ??= e.code));
          s.write(head('/v1/hooks', body.length, `svk_live_${'0'.repeat(32)}`));
          s.write(body);
        }).then((r) => ({ ...r, failed }));
      }),
    );
    for (const r of outcomes) {
      assert.equal(statusOf(r.response), 401, JSON.stringify(r.response.slice(0, 200)));
      assert.equal(r.failed, undefined, 'the client saw no reset');
      assert.ok(r.closedAfterMs < LINGER_MS + MARGIN_MS, `closed after ${r.closedAfterMs} ms`);
    }
  });

  test('headers trickling without end: 408 request_timeout, closed at the headers timeout', async () => {
    const slow = await rawClient(h.port, (s) => trickle(s, head('/v1/hooks', 10).repeat(20), 100));
    assert.equal(statusOf(slow.response), 408, slow.response);
    assert.equal(bodyOf(slow.response).code, 'request_timeout');
    assert.ok(slow.closedAfterMs <= HEADERS_MS + MARGIN_MS, `closed after ${slow.closedAfterMs} ms`);
  });

  test('a connection that sends nothing is closed at the headers timeout', async () => {
    const silent = await rawClient(h.port, () => undefined);
    assert.ok(silent.closedAfterMs >= HEADERS_MS - 50, `closed after ${silent.closedAfterMs} ms`);
    assert.ok(silent.closedAfterMs <= HEADERS_MS + MARGIN_MS, `closed after ${silent.closedAfterMs} ms`);
  });

  test('an idle keep-alive connection is closed at the keep-alive timeout, after its answer', async () => {
    let answeredAt = 0;
    const idle = await rawClient(h.port, (s) => {
      s.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
      s.once('data', () => (answeredAt = Date.now()));
    });
    assert.equal(statusOf(idle.response), 200);
    assert.match(idle.response, /keep-alive/i);
    assert.match(
      idle.response,
      new RegExp(`keep-alive: timeout=${KEEP_ALIVE_MS / 1000}`, 'i'),
      'the timeout is advertised',
    );
    // Node keeps the socket 1 s past the advertised value, so a client reusing it at the last moment is not reset.
    const idleFor = Date.now() - answeredAt;
    assert.ok(idleFor >= KEEP_ALIVE_MS - 100, `idle for ${idleFor} ms before the close`);
    assert.ok(idleFor <= KEEP_ALIVE_MS + 1000 + MARGIN_MS, `idle for ${idleFor} ms before the close`);
  });

  test('a complete request sent slowly but in time is answered normally', async () => {
    const body = JSON.stringify({ target_url: 'https://example.com/in-time' });
    const r = await rawClient(h.port, (s) => {
      s.write(head('/v1/hooks', Buffer.byteLength(body)) + body.slice(0, 10));
      setTimeout(() => s.write(body.slice(10)), 500);
      s.once('data', () => s.end());
    });
    assert.equal(statusOf(r.response), 201, r.response);
  });
});
