// `file_url` ingest under the outbound rule: http(s) only, no credentials, every resolved address public unless
// SIGNET_ALLOW_PRIVATE_NETWORK (checked again at connect time by the guarded agent, against DNS rebinding),
// redirects followed by hand (at most 3, each target re-checked), the body cut off at the size limit.
import type { Agent } from 'undici';
import { MAX_FILE_BYTES } from '../limits.js';
import { apiError } from '../lib/errors.js';
import { boundedGet, createGuardedAgent } from '../lib/outbound.js';

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
      const r = await boundedGet(agent, raw, {
        allowPrivateNetwork: opts.allowPrivateNetwork,
        maxRedirects: MAX_REDIRECTS,
        maxBytes,
        timeoutMs: TIMEOUT_MS,
        headers: { accept: 'application/pdf, */*;q=0.5', 'user-agent': 'Signet/1.0 (file_url fetch)' },
      });
      if (r.ok) return r.body;
      switch (r.problem) {
        case 'bad_url':
        case 'refused':
          throw unreachable(r.reason);
        case 'transport':
          if (r.during === 'body') throw unreachable('download failed');
          throw unreachable(
            /refused address/.test((r.error as Error).message ?? '') ? 'refused address' : 'connection failed',
          );
        case 'status':
          throw unreachable(`HTTP ${r.status}`);
        case 'too_large':
          throw apiError('file_too_large', { meta: { max_bytes: maxBytes } });
        case 'redirects':
          throw unreachable('too many redirects');
      }
    },
    close: () => agent.close(),
  };
}
