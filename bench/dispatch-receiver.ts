// The loopback receiver of the dispatch-ceiling bench, in a process of its own so it never shares the measured
// process's event loop. Answers every request 200 at once (keep-alive), counts them and tells the parent, over IPC,
// how many arrived since the last reset and when the first and last did.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';

let count = 0;
let first = 0;
let last = 0;
const server = http.createServer({ keepAliveTimeout: 30_000 }, (req, res) => {
  req.resume();
  req.on('end', () => {
    const now = performance.timeOrigin + performance.now();
    if (count++ === 0) first = now;
    last = now;
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '2' });
    res.end('ok');
  });
});

type Ask = { op: 'reset' | 'stats' | 'stop'; seq: number };
process.on('message', (m: Ask) => {
  if (m.op === 'reset') count = first = last = 0;
  if (m.op === 'stop') {
    server.closeAllConnections();
    server.close(() => process.exit(0));
  }
  process.send!({ seq: m.seq, count, first, last });
});
// The parent going away ends this process too.
process.on('disconnect', () => process.exit(0));

server.listen(0, '127.0.0.1', () => process.send!({ port: (server.address() as AddressInfo).port }));
