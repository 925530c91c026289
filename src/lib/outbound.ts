// Guarantee: unless private networks are allowed, outbound requests reach only public unicast addresses, checked at registration and again at connect time.
import dns from 'node:dns';
import type { LookupFunction, Socket } from 'node:net';
import { Agent, buildConnector, request } from 'undici';
import { MAX_URL_LENGTH } from '../limits.js';
import { parseAddress } from './ip.js';

export type OutboundCheck = { ok: true; url: URL } | { ok: false; reason: string };

const DNS_TIMEOUT_MS = 5000;

/** Thrown (and passed to undici callbacks) when a connection would reach a non-public address. */
export class RefusedAddressError extends Error {
  readonly code = 'SIGNET_REFUSED_ADDRESS';
  constructor(
    readonly address: string,
    readonly host: string,
  ) {
    super(`refused address ${address} for host ${host}: not a public address`);
    this.name = 'RefusedAddressError';
  }
}

/** Syntax only (no DNS): scheme, credentials, length, host. Used at registration time before DNS. */
export function checkOutboundSyntax(raw: string): OutboundCheck {
  if (typeof raw !== 'string' || raw === '') return { ok: false, reason: 'URL is required' };
  if (raw.length > MAX_URL_LENGTH) return { ok: false, reason: `URL is longer than ${MAX_URL_LENGTH} characters` };
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: 'not an absolute URL' };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    return { ok: false, reason: 'URL scheme must be http or https' };
  if (url.username !== '' || url.password !== '') return { ok: false, reason: 'URL must not contain credentials' };
  if (url.hostname === '') return { ok: false, reason: 'URL must have a host' };
  // Normalisation can lengthen the URL (percent-encoding, punycode); the stored form must fit too.
  if (url.href.length > MAX_URL_LENGTH) return { ok: false, reason: `URL is longer than ${MAX_URL_LENGTH} characters` };
  return { ok: true, url };
}

export type HostResolver = (hostname: string) => Promise<string[]>;

const systemResolver: HostResolver = async (hostname) => {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('DNS lookup timed out')), DNS_TIMEOUT_MS);
    timer.unref();
  });
  try {
    const found = await Promise.race([dns.promises.lookup(hostname, { all: true, verbatim: true }), timeout]);
    return found.map((a) => a.address);
  } finally {
    clearTimeout(timer);
  }
};

/** The URL's host as an IP literal without brackets, or null for a domain name. */
function literalHost(url: URL): string | null {
  const h = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  return parseAddress(h) === null ? null : h;
}

/**
 * Syntax + DNS resolution (node:dns/promises lookup all) + address rule. `resolve` is injectable for tests.
 * With private networks allowed there is no address to refuse, so DNS is skipped: an unresolvable host
 * then fails at delivery rather than registration, keeping dev and tests free of DNS.
 */
export async function checkOutboundUrl(
  raw: string,
  opts: { allowPrivateNetwork: boolean; resolve?: HostResolver },
): Promise<OutboundCheck> {
  const syntax = checkOutboundSyntax(raw);
  if (!syntax.ok || opts.allowPrivateNetwork) return syntax;
  const { url } = syntax;
  const literal = literalHost(url);
  if (literal !== null) {
    return isPublicAddress(literal) ? syntax : { ok: false, reason: `address ${literal} is not a public address` };
  }
  let addresses: string[];
  try {
    addresses = await (opts.resolve ?? systemResolver)(url.hostname);
  } catch {
    return { ok: false, reason: `host ${url.hostname} does not resolve` };
  }
  if (addresses.length === 0) return { ok: false, reason: `host ${url.hostname} does not resolve` };
  // One refused address refuses the URL: the connection could pick any of them.
  const bad = addresses.find((a) => !isPublicAddress(a));
  if (bad !== undefined)
    return { ok: false, reason: `host ${url.hostname} resolves to ${bad}, which is not a public address` };
  return syntax;
}

// Non-public IPv4 ranges (IANA special-purpose registry, plus multicast and the 240/4 reserved block).
const V4_REFUSED: Array<[string, number]> = [
  ['0.0.0.0', 8], // "this network", unspecified
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // CGNAT shared space
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // TEST-NET-1
  ['192.88.99.0', 24], // 6to4 relay anycast
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // TEST-NET-2
  ['203.0.113.0', 24], // TEST-NET-3
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, includes 255.255.255.255 broadcast
];

const V4_REFUSED_MASKED = V4_REFUSED.map(([net, prefix]) => {
  const p = parseAddress(net);
  if (p?.kind !== 4) throw new Error(`bad range ${net}`);
  const mask = (0xffffffff << (32 - prefix)) >>> 0;
  return { net: p.value, mask };
});

const isPublicV4 = (v: number): boolean => !V4_REFUSED_MASKED.some((r) => (v & r.mask) >>> 0 === r.net);

/**
 * Public = global unicast. IPv6 is public only inside 2000::/3 minus documentation and IETF-assignment blocks;
 * that leaves out ::, ::1, ::/96, fc00::/7, fe80::/10, fec0::/10, ff00::/8 and the rest by construction.
 * Forms that carry an IPv4 address (mapped, NAT64 64:ff9b::/96, 6to4 2002::/16) are judged by that address.
 */
export function isPublicAddress(address: string): boolean {
  if (typeof address !== 'string') return false;
  const a = parseAddress(address); // IPv4-mapped already comes back as IPv4
  if (a === null) return false;
  if (a.kind === 4) return isPublicV4(a.value);
  const p = a.parts;
  if (p[0] === 0x64 && p[1] === 0xff9b && p[2] === 0 && p[3] === 0 && p[4] === 0 && p[5] === 0) {
    return isPublicV4(p[6]! * 65536 + p[7]!);
  }
  if (p[0] === 0x2002) return isPublicV4(p[1]! * 65536 + p[2]!);
  if ((p[0]! & 0xe000) !== 0x2000) return false;
  if (p[0] === 0x2001 && p[1]! < 0x200) return false; // 2001::/23 IETF protocol assignments (Teredo, ORCHID, ...)
  if (p[0] === 0x2001 && p[1] === 0xdb8) return false; // 2001:db8::/32 documentation
  if (p[0] === 0x3fff && p[1]! < 0x1000) return false; // 3fff::/20 documentation
  return true;
}

/**
 * Wraps a dns.lookup-compatible function so that a name resolving to any non-public address fails.
 * Handles both result shapes net.connect asks for (single address, or `all: true` for happy eyeballs).
 */
export function guardLookup(
  allowPrivateNetwork: boolean,
  base: LookupFunction = dns.lookup as unknown as LookupFunction,
): LookupFunction {
  return (hostname, options, callback) => {
    base(hostname, options, (err, address, family) => {
      if (err) return callback(err, address, family);
      if (!allowPrivateNetwork) {
        const list = Array.isArray(address) ? address.map((a) => a.address) : [address];
        const bad = list.find((a) => !isPublicAddress(a));
        // Hand back no addresses with the error so nothing downstream can use them.
        if (bad !== undefined)
          return callback(new RefusedAddressError(bad, hostname), Array.isArray(address) ? [] : '');
      }
      callback(null, address, family);
    });
  };
}

type Connector = buildConnector.connector;

/**
 * Wraps a connector with two more checks: IP-literal hosts (net.connect never calls lookup for those) are
 * refused before connecting, and the connected socket's peer address is checked as a last line of defence.
 */
export function guardConnector(allowPrivateNetwork: boolean, base: Connector): Connector {
  if (allowPrivateNetwork) return base;
  return (options, callback) => {
    const host = options.hostname.startsWith('[') ? options.hostname.slice(1, -1) : options.hostname;
    if (parseAddress(host) !== null && !isPublicAddress(host)) {
      callback(new RefusedAddressError(host, host), null);
      return;
    }
    base(options, (err, socket) => {
      if (err !== null) return callback(err, null);
      const peer = (socket as Socket).remoteAddress;
      if (peer === undefined || !isPublicAddress(peer)) {
        (socket as Socket).destroy();
        return callback(new RefusedAddressError(peer ?? 'unknown', host), null);
      }
      callback(null, socket);
    });
  };
}

/**
 * An undici Agent whose connect-time DNS lookup refuses non-public addresses unless allowed (defeats DNS
 * rebinding between check and send). Keep-alive on; options: { allowPrivateNetwork, connections?: number }.
 */
export function createGuardedAgent(opts: { allowPrivateNetwork: boolean; connections?: number }): Agent {
  const base = buildConnector({
    lookup: guardLookup(opts.allowPrivateNetwork),
    timeout: 10_000,
    keepAlive: true,
  });
  return new Agent({
    connect: guardConnector(opts.allowPrivateNetwork, base),
    keepAliveTimeout: 4_000,
    ...(opts.connections !== undefined ? { connections: opts.connections } : {}),
  });
}

/** What a bounded GET ended with; callers put each failure into their own words and error codes. */
export type BoundedFetch =
  | { ok: true; body: Uint8Array }
  /** The URL (or a redirect's) fails the syntax check: `reason` names the check, never the URL. */
  | { ok: false; problem: 'bad_url'; reason: string }
  /** The URL's host is refused by the outbound rule or does not resolve. */
  | { ok: false; problem: 'refused'; reason: string; url: string }
  /** The connection or the download failed (a refused address at connect time included). */
  | { ok: false; problem: 'transport'; during: 'request' | 'body'; error: unknown; url: string }
  | { ok: false; problem: 'status'; status: number; url: string }
  | { ok: false; problem: 'too_large'; url: string }
  | { ok: false; problem: 'redirects' };

/**
 * GET under the outbound rule through a guarded agent: redirects followed by hand (each target re-checked), the body
 * cut off past `maxBytes` (declared or counted), never throwing. The one way file_url and CRL downloads fetch.
 */
export async function boundedGet(
  agent: Agent,
  url: string,
  o: {
    allowPrivateNetwork: boolean;
    maxRedirects: number;
    maxBytes: number;
    timeoutMs: number;
    headers: Record<string, string>;
    signal?: AbortSignal;
  },
): Promise<BoundedFetch> {
  let current = url;
  for (let hop = 0; hop <= o.maxRedirects; hop++) {
    const syntax = checkOutboundSyntax(current);
    if (!syntax.ok) return { ok: false, problem: 'bad_url', reason: syntax.reason };
    const check = await checkOutboundUrl(current, { allowPrivateNetwork: o.allowPrivateNetwork });
    if (!check.ok) return { ok: false, problem: 'refused', reason: check.reason, url: current };
    let res;
    try {
      res = await request(check.url, {
        method: 'GET',
        dispatcher: agent,
        signal: o.signal,
        headersTimeout: o.timeoutMs,
        bodyTimeout: o.timeoutMs,
        headers: o.headers,
      });
    } catch (error) {
      return { ok: false, problem: 'transport', during: 'request', error, url: current };
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
      return { ok: false, problem: 'status', status: res.statusCode, url: current };
    }
    if (Number(res.headers['content-length'] ?? NaN) > o.maxBytes) {
      discard();
      return { ok: false, problem: 'too_large', url: current };
    }
    const chunks: Buffer[] = [];
    let size = 0;
    try {
      for await (const chunk of res.body) {
        size += (chunk as Buffer).length;
        if (size > o.maxBytes) {
          discard();
          return { ok: false, problem: 'too_large', url: current };
        }
        chunks.push(chunk as Buffer);
      }
    } catch (error) {
      return { ok: false, problem: 'transport', during: 'body', error, url: current };
    }
    return { ok: true, body: new Uint8Array(Buffer.concat(chunks)) };
  }
  return { ok: false, problem: 'redirects' };
}
