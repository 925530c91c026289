// Guarantee: X-Forwarded-For is read only when the socket's peer is a trusted proxy (TRUST_PROXY), and then only as
// far left as the hops stay trusted: the client is the rightmost address that is not a trusted proxy (Fastify's
// trustProxy semantics). With no trusted proxies the header is never read. A hop that is not an address ends the
// walk at the trusted proxy that reported it, so a caller can never make its address an arbitrary string.
import type { FastifyRequest } from 'fastify';
import { compileAllowlist, parseAddress } from '../lib/ip.js';

export type ClientAddressOf = (req: FastifyRequest) => string | undefined;

const socketPeer: ClientAddressOf = (req) => req.socket.remoteAddress;

export function clientAddressResolver(trusted: readonly string[]): ClientAddressOf {
  if (trusted.length === 0) return socketPeer;
  const isTrusted = compileAllowlist(trusted);
  return (req) => {
    let address = req.socket.remoteAddress;
    if (!isTrusted(address)) return address;
    const header = req.headers['x-forwarded-for'];
    if (header === undefined) return address;
    const hops = (Array.isArray(header) ? header.join(',') : header).split(',');
    for (let i = hops.length - 1; i >= 0; i--) {
      const hop = hops[i]!.trim();
      if (parseAddress(hop) === null) return address;
      address = hop;
      if (!isTrusted(address)) return address;
    }
    return address;
  };
}
