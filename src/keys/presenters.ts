// The operator view of a key (CLI, later the dashboard): never the hash, never the plaintext.
import { iso } from '../lib/clock.js';
import type { ApiKey } from './keys.repo.js';

export const presentKey = (k: ApiKey) => ({
  id: k.id,
  label: k.label,
  workspace_id: k.workspace_id,
  created_at: iso(k.created_at),
  last_used_at: k.last_used_at === null ? null : iso(k.last_used_at),
  last_used_ip: k.last_used_ip,
  revoked_at: k.revoked_at === null ? null : iso(k.revoked_at),
  revoked_by: k.revoked_by,
  legacy: k.legacy === 1,
  rate_limit: k.rate_limit,
  allowed_ips: JSON.parse(k.allowed_ips) as string[],
  allowed_origins: JSON.parse(k.allowed_origins) as string[],
});
