// The SDK tests' real server: the app in-process on a real port, a webhook receiver, a PDF, and clients for it.
import { after, before } from 'node:test';
import http from 'node:http';
import net from 'node:net';
import { makePdf } from '../../../src/documents/pdf/testing/fixtures.js';
import { startHarness, type Harness } from '../../../src/testing/harness.js';
import { Signet, type SignetOptions, type SigningRequestCreateParams } from '../../src/index.js';

type Delivery = { path: string; headers: http.IncomingHttpHeaders; raw: Buffer };

/** A webhook receiver that keeps each delivery's raw bytes and headers. */
export async function startReceiver() {
  const deliveries: Delivery[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      deliveries.push({ path: req.url ?? '/', headers: req.headers, raw: Buffer.concat(chunks) });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as net.AddressInfo;
  return {
    deliveries,
    url: (p: string) => `http://127.0.0.1:${port}${p}`,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

// Live bindings: each test file reads them once useRealServer's `before` has run.
export let h: Harness;
export let rx: Awaited<ReturnType<typeof startReceiver>>;
export let pdf: Uint8Array;

/** Starts the server, the receiver and the PDF before the calling suite, and stops them after it. */
export function useRealServer(): void {
  before(async () => {
    h = await startHarness();
    rx = await startReceiver();
    pdf = await makePdf({ pages: 1, text: [['Purchase contract']] });
  });
  after(async () => {
    await rx.close();
    await h.close();
  });
}

/** A client for a fresh tenant whose sleep moves the server's clock and is recorded. */
export async function client(opts: Partial<SignetOptions> = {}) {
  const { token, workspaceId } = await h.tenant('business');
  const sleeps: number[] = [];
  const signet = new Signet({
    apiKey: token,
    baseUrl: h.url(''),
    sleep: async (ms) => {
      sleeps.push(ms);
      h.clock.advance(ms);
    },
    ...opts,
  });
  return { signet, sleeps, token, workspaceId };
}

export const request = (over: Partial<SigningRequestCreateParams> = {}): SigningRequestCreateParams => ({
  signers: [{ role: 'buyer', email: 'ana@example.com', name: 'Ana Pérez' }],
  file: { name: 'contract.pdf', data: pdf },
  placement: 'auto_append',
  title: 'Purchase contract',
  ...over,
});

export const countDocuments = async (workspaceId: string) =>
  Number(
    (
      await h.db.kysely
        .selectFrom('documents')
        .select((eb) => eb.fn.countAll().as('n'))
        .where('workspace_id', '=', workspaceId)
        .executeTakeFirstOrThrow()
    ).n,
  );
