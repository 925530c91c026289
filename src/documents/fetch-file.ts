// `file_url` ingest under the outbound rule: http(s) only, no credentials, every resolved address public unless
// SIGNET_ALLOW_PRIVATE_NETWORK (checked again at connect time by the guarded agent, against DNS rebinding),
// redirects followed by hand (at most 3, each target re-checked), the body cut off at the size limit.
import { request, type Agent } from 'undici';
import { MAX_FILE_BYTES } from '../limits.js';
import { apiError } from '../lib/errors.js';
import { checkOutboundUrl, createGuardedAgent } from '../lib/outbound.js';

const MAX_REDIRECTS = 3;
const TIMEOUT_MS = 20_000;

const unreachable = (reason: string) =>
  apiError('file_url_unreachable', {
    message: `file_url could not be fetched: ${reason}.`,
    meta: { field: 'file_url', reason },
  });

export type FileFetcher = { fetch(url: string): Promise<Uint8Array>; close(): Promise<void> };

export function createFileFetcher(opts: { allowPrivateNetwork: boolean; maxBytes?: number }): FileFetcher {
  const agent: Agent = createGuardedAgent({ allowPrivateNetwork: opts.allowPrivateNetwork, connections: 8 });
  const maxBytes = opts.maxBytes ?? MAX_FILE_BYTES;
  return {
    async fetch(raw) {
      let current = raw;
      for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
        const check = await checkOutboundUrl(current, { allowPrivateNetwork: opts.allowPrivateNetwork });
        if (!check.ok) throw unreachable(check.reason);
        let res;
        try {
          res = await request(check.url, {
            method: 'GET',
            dispatcher: agent,
            headersTimeout: TIMEOUT_MS,
            bodyTimeout: TIMEOUT_MS,
            headers: { accept: 'application/pdf, */*;q=0.5', 'user-agent': 'Signet/1.0 (file_url fetch)' },
          });
        } catch (err) {
          const msg = (err as Error).message ?? '';
          throw unreachable(/refused address/.test(msg) ? 'refused address' : 'connection failed');
        }
        // A body we abandon must not surface later as an unhandled stream error.
        const discard = () => {
          res.body.on('error', () => undefined);
          res.body.destroy();
        };
        if (res.statusCode >= 300 && res.statusCode < 400 && res.headers.location) {
          discard();
          current = new URL(String(res.headers.location), check.url).toString();
          continue;
        }
        if (res.statusCode < 200 || res.statusCode >= 300) {
          discard();
          throw unreachable(`HTTP ${res.statusCode}`);
        }
        const declared = Number(res.headers['content-length'] ?? NaN);
        if (declared > maxBytes) {
          discard();
          throw apiError('file_too_large', { meta: { max_bytes: maxBytes } });
        }
        const chunks: Buffer[] = [];
        let size = 0;
        try {
          for await (const chunk of res.body) {
            size += (chunk as Buffer).length;
            if (size > maxBytes) {
              discard();
              throw apiError('file_too_large', { meta: { max_bytes: maxBytes } });
            }
            chunks.push(chunk as Buffer);
          }
        } catch (err) {
          if ((err as { code?: string }).code === 'file_too_large') throw err;
          throw unreachable('download failed');
        }
        return new Uint8Array(Buffer.concat(chunks));
      }
      throw unreachable('too many redirects');
    },
    close: () => agent.close(),
  };
}
