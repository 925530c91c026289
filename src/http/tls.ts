// HTTPS served by the process itself (TLS_CERT_FILE, TLS_KEY_FILE). Guarantees:
// - TLS 1.2 or newer, and only forward-secret AEAD suites; a client offering nothing else is refused at the handshake.
// - Files that cannot serve (unreadable, not PEM, a key that is not the certificate's) stop start-up with one line
//   naming the variable and the file.
// - A reload (SIGHUP) changes what new connections get; an open connection keeps the context it was made with and
//   finishes. A reload that fails changes nothing: the certificate in use stays.
import fs from 'node:fs/promises';
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { createSecureContext, type SecureContextOptions } from 'node:tls';
import type { FastifyInstance } from 'fastify';
import { ConfigError, type Config, type TlsFiles } from '../config.js';
import { parseAddress } from '../lib/ip.js';

/** TLS 1.3's suites, then TLS 1.2's with ECDHE and AEAD only (Mozilla's "intermediate" profile without DHE). */
export const TLS_CIPHERS = [
  'TLS_AES_128_GCM_SHA256',
  'TLS_AES_256_GCM_SHA384',
  'TLS_CHACHA20_POLY1305_SHA256',
  'ECDHE-ECDSA-AES128-GCM-SHA256',
  'ECDHE-RSA-AES128-GCM-SHA256',
  'ECDHE-ECDSA-AES256-GCM-SHA384',
  'ECDHE-RSA-AES256-GCM-SHA384',
  'ECDHE-ECDSA-CHACHA20-POLY1305',
  'ECDHE-RSA-CHACHA20-POLY1305',
].join(':');

/** Sent on every answer when BASE_URL is https: 180 days, the dashboard's value before it was app-wide. */
export const HSTS = 'max-age=15552000';

/** A certificate and its key, checked to belong together; what the log says about it. */
export type TlsMaterial = { cert: string; key: string; subject: string; validTo: string; fingerprint256: string };

async function readFile(variable: string, file: string): Promise<string> {
  try {
    return await fs.readFile(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
    throw new ConfigError(`${variable} (${file}) cannot be read: ${code}`);
  }
}

/** Reads and checks both files; a problem is a ConfigError of one line naming the variable. */
export async function loadTls(files: TlsFiles): Promise<TlsMaterial> {
  const [cert, key] = await Promise.all([
    readFile('TLS_CERT_FILE', files.certFile),
    readFile('TLS_KEY_FILE', files.keyFile),
  ]);
  let x509: X509Certificate;
  try {
    // The file may carry intermediates after the server's certificate; the first is the server's.
    x509 = new X509Certificate(cert);
  } catch {
    throw new ConfigError(`TLS_CERT_FILE (${files.certFile}) holds no PEM certificate`);
  }
  let privateKey: ReturnType<typeof createPrivateKey>;
  try {
    privateKey = createPrivateKey(key);
  } catch {
    throw new ConfigError(`TLS_KEY_FILE (${files.keyFile}) holds no unencrypted PEM private key`);
  }
  if (!x509.checkPrivateKey(privateKey)) {
    throw new ConfigError(
      `TLS_KEY_FILE (${files.keyFile}) is not the key of the certificate in TLS_CERT_FILE (${files.certFile})`,
    );
  }
  const material = { cert, key, subject: x509.subject, validTo: x509.validTo, fingerprint256: x509.fingerprint256 };
  try {
    createSecureContext(secureContextOptions(material));
  } catch (err) {
    throw new ConfigError(`TLS_CERT_FILE, TLS_KEY_FILE: ${(err as Error).message.split('\n')[0]}`);
  }
  return material;
}

/** Everything a context needs; setSecureContext replaces the whole context, so the policy goes with every reload. */
export const secureContextOptions = (m: Pick<TlsMaterial, 'cert' | 'key'>): SecureContextOptions => ({
  cert: m.cert,
  key: m.key,
  minVersion: 'TLSv1.2',
  ciphers: TLS_CIPHERS,
  honorCipherOrder: true,
});

/** What SIGHUP runs: new connections get the files' current certificate; on failure it throws and nothing changes. */
export function createTlsReloader(
  server: { setSecureContext(o: SecureContextOptions): void },
  files: TlsFiles,
): () => Promise<TlsMaterial> {
  return async () => {
    const m = await loadTls(files);
    server.setSecureContext(secureContextOptions(m));
    return m;
  };
}

export function registerHsts(app: FastifyInstance, baseUrl: string): void {
  if (!baseUrl.startsWith('https:')) return;
  app.addHook('onSend', (_req, reply, payload, done) => {
    reply.header('strict-transport-security', HSTS);
    done(null, payload);
  });
}

const isLoopback = (host: string): boolean => {
  if (host.toLowerCase() === 'localhost') return true;
  const a = parseAddress(host);
  if (a?.kind === 4) return a.value >>> 24 === 127;
  return a?.kind === 6 && a.parts.slice(0, 7).every((p) => p === 0) && a.parts[7] === 1;
};

/** The start-up warning when other machines reach this process over plain HTTP with nothing in front; null if not. */
export function plainHttpExposure(config: Pick<Config, 'host' | 'baseUrl' | 'trustProxy' | 'tls'>): string | null {
  if (config.tls || isLoopback(config.host) || !config.baseUrl.startsWith('http:') || config.trustProxy.length)
    return null;
  return (
    `HOST ${config.host} takes plain HTTP from other machines (BASE_URL is http, no TRUST_PROXY): API keys, ` +
    'dashboard passwords and signer links travel in clear. Set TLS_CERT_FILE and TLS_KEY_FILE, or put a TLS ' +
    'proxy in front and list it in TRUST_PROXY'
  );
}
