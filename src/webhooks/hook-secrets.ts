// Opening stored hook secrets for signing. Delivery signing reads one per attempt: opened values are kept by hook id
// and stored text (a rotated or replaced secret is a new entry), so a dispatcher pays one AES-GCM open (µs; the
// per-purpose key is derived once per keyring) per hook, not per delivery. Plain values pass through.
import { decryptSecret, isEncrypted, type Keyring } from '../lib/secret-box.js';

const CACHE_SIZE = 1000;

export type HookSecretOpener = (hookId: string, stored: string) => string;

export function createHookSecretOpener(keyring: Keyring | null): HookSecretOpener {
  const opened = new Map<string, string>();
  return (hookId, stored) => {
    if (!isEncrypted(stored)) return stored;
    const k = `${hookId}\n${stored}`;
    let plain = opened.get(k);
    if (plain === undefined) {
      plain = decryptSecret(keyring, 'hook-secret', hookId, stored);
      if (opened.size >= CACHE_SIZE) opened.clear();
      opened.set(k, plain);
    }
    return plain;
  };
}
