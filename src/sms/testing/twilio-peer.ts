// A local HTTP peer answering as Twilio's Messages resource (201 with a fresh SID), recording every message it is
// handed: an end-to-end test points SMS_URL/SMS_API_BASE at it and counts what really left the process.
import http from 'node:http';

export type TwilioPeer = {
  /** The env that sends the app's SMS here. */
  env: { SMS_URL: string; SMS_API_BASE: string };
  /** Every message received, in arrival order. */
  received: Array<{ to: string; from: string; body: string }>;
  close(): Promise<void>;
};

export async function startTwilioPeer(): Promise<TwilioPeer> {
  const received: TwilioPeer['received'] = [];
  let sid = 0;
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      const form = new URLSearchParams(body);
      received.push({ to: form.get('To') ?? '', from: form.get('From') ?? '', body: form.get('Body') ?? '' });
      const id = `SM${String(++sid).padStart(32, '0')}`;
      res.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify({ sid: id, status: 'queued' }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return {
    env: { SMS_URL: 'twilio://AC42:tok-peer@+15550001111', SMS_API_BASE: base },
    received,
    close: () => new Promise((r) => server.close(() => r())),
  };
}
