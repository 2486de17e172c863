/**
 * Web pages fetched for `browse_website` under the run's browsing policy. The page, its server and
 * its DNS are all untrusted, so every hop of a fetch (the first request and each redirect, followed
 * here by hand) passes the same checks before anything is sent: http or https, no credentials in the
 * URL, a host on the allow list, and addresses that are all public unless the policy allows private
 * ones. The connection then goes to the address that was checked, whatever the DNS answers next (a
 * rebinding attack swaps a public answer for a private one between the check and the connect).
 * Nothing is kept between fetches: no cookies, no connections. A body is read up to a byte cap and
 * within an overall and an idle timeout, and only text the model can read is accepted.
 */
import { lookup } from 'node:dns/promises';
import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import { pipeline, type Readable } from 'node:stream';
import { domainToASCII } from 'node:url';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import type { WebAccess, WebPage } from './command.js';
import { parseContentType, READABLE_TYPES, readableText } from './page-text.js';

/** What a run lets `browse_website` reach. */
export interface BrowsePolicy {
  /**
   * Hosts that may be browsed: `example.com` (that host only), `*.example.com` (its subdomains, not
   * itself) or `*` (any host). Empty: none.
   */
  allowHosts: string[];
  /** Allow private, loopback and link-local addresses (an intranet, a local server). Default false. */
  allowPrivate?: boolean;
  /** Most bytes of a body read (after decompression); the page is cut there. Default 1 MiB. */
  maxBytes?: number;
  /** Time one fetch may take, redirects included, in milliseconds. Default 15 s. */
  timeoutMs?: number;
  /** Redirects followed before the fetch is refused. Default 5. */
  maxRedirects?: number;
}

/** The policy's defaults. */
export const DEFAULT_BROWSE_LIMITS = Object.freeze({
  maxBytes: 1024 * 1024,
  timeoutMs: 15_000,
  maxRedirects: 5,
});

/** Longest silence allowed while waiting for a server (to connect, answer, or send more). */
const IDLE_TIMEOUT_MS = 10_000;

/** One address of a host, as dns.lookup gives it. */
export interface HostAddress {
  address: string;
  family: number;
}

/** Every address of a host name. */
export type ResolveHost = (host: string) => Promise<HostAddress[]>;

const systemResolve: ResolveHost = (host) => lookup(host, { all: true });

const HEADERS = {
  'user-agent': 'meta-agent (browse_website)',
  accept: 'text/html, application/xhtml+xml, text/plain;q=0.9, application/json;q=0.9',
  'accept-encoding': 'gzip, deflate, br',
};

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** Fetches pages under a BrowsePolicy; every refusal is an Error whose message says what to do instead. */
export class PolicedWeb implements WebAccess {
  readonly #allowHosts: readonly string[];
  readonly #allowPrivate: boolean;
  readonly #maxBytes: number;
  readonly #timeoutMs: number;
  readonly #maxRedirects: number;
  readonly #resolve: ResolveHost;

  /** `resolve` finds a host's addresses (dns.lookup by default). */
  constructor(policy: BrowsePolicy, resolve: ResolveHost = systemResolve) {
    this.#allowHosts = policy.allowHosts.map(hostPattern);
    this.#allowPrivate = policy.allowPrivate ?? false;
    this.#maxBytes = policy.maxBytes ?? DEFAULT_BROWSE_LIMITS.maxBytes;
    this.#timeoutMs = policy.timeoutMs ?? DEFAULT_BROWSE_LIMITS.timeoutMs;
    this.#maxRedirects = policy.maxRedirects ?? DEFAULT_BROWSE_LIMITS.maxRedirects;
    this.#resolve = resolve;
  }

  /**
   * The page at `url` as readable text, after redirects.
   * @throws Error (`browse_website: …`) for a URL, host, address, redirect or content the policy
   * refuses, a server that fails or is too slow; `signal.reason` when `signal` aborts.
   */
  async fetchPage(url: string, signal: AbortSignal): Promise<WebPage> {
    signal.throwIfAborted();
    const deadline = AbortSignal.timeout(this.#timeoutMs);
    try {
      return await this.#fetch(url, AbortSignal.any([signal, deadline]));
    } catch (error) {
      if (signal.aborted) throw signal.reason;
      if (deadline.aborted)
        throw refusal(
          `${url} took longer than ${seconds(this.#timeoutMs)} to load and was abandoned; try another page`,
        );
      throw error;
    }
  }

  async #fetch(start: string, signal: AbortSignal): Promise<WebPage> {
    if (!URL.canParse(start))
      throw refusal(`"${start}" is not a URL; give a full address such as https://example.com/page`);
    let url = new URL(start);
    let from: URL | undefined;
    for (let redirects = 0; ; redirects++) {
      const address = await this.#check(url, from, signal);
      const response = await send(url, address, signal, Math.min(IDLE_TIMEOUT_MS, this.#timeoutMs));
      const location = response.headers.location;
      if (!REDIRECTS.has(response.statusCode ?? 0) || location === undefined)
        return await this.#page(url, response);
      response.destroy();
      if (redirects >= this.#maxRedirects)
        throw refusal(
          `${start} redirected more than ${this.#maxRedirects} times; browse the page it should end at directly`,
        );
      if (!URL.canParse(location, url.href)) throw refusal(`${url.href} redirected to an invalid address`);
      from = url;
      url = new URL(location, url.href);
    }
  }

  /** The address to connect to for `url`, once the URL, its host and all its addresses pass the policy. */
  async #check(url: URL, from: URL | undefined, signal: AbortSignal): Promise<HostAddress> {
    const hop = from === undefined ? '' : `${from.href} redirected to ${url.href}, and `;
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      throw refusal(`${hop}only http and https pages can be browsed (not ${url.protocol})`);
    if (url.username !== '' || url.password !== '')
      throw refusal(`${hop}a URL with a user name or password is refused; browse it without them`);
    const host = bareHost(url.hostname);
    if (!this.#allowHosts.some((pattern) => hostMatches(host, pattern)))
      throw refusal(
        `${hop}${host} is not in the allowed hosts (${this.#allowHosts.join(', ') || 'none'}; ` +
          'the user allows hosts with --allow-web); browse an allowed host, or ask the user to allow this one',
      );
    const addresses = await this.#addresses(host, hop, signal);
    const blocked = this.#allowPrivate ? undefined : addresses.find((a) => isPrivateAddress(a.address));
    if (blocked !== undefined) {
      const what = blocked.address === host ? `${host} is` : `${host} resolves to ${blocked.address},`;
      throw refusal(
        `${hop}${what} a private or local address; this run does not browse those ` +
          '(the user allows them with --allow-private-network)',
      );
    }
    return addresses[0]!;
  }

  async #addresses(host: string, hop: string, signal: AbortSignal): Promise<HostAddress[]> {
    const family = isIP(host);
    if (family !== 0) return [{ address: host, family }];
    let addresses: HostAddress[];
    try {
      addresses = await abortable(this.#resolve(host), signal);
    } catch (error) {
      if (signal.aborted) throw error;
      throw refusal(`${hop}${host} could not be found (${errorCode(error)}); check the address`);
    }
    if (addresses.length === 0) throw refusal(`${hop}${host} has no address; check the address`);
    return addresses;
  }

  /** The page `response` answers, once its type is one the model can read. */
  async #page(url: URL, response: IncomingMessage): Promise<WebPage> {
    const header = response.headers['content-type'];
    const contentType = parseContentType(header ?? '');
    if (!READABLE_TYPES.has(contentType.type)) {
      response.destroy();
      const is = header === undefined ? 'has no content type' : `is ${contentType.type}`;
      throw refusal(`${url.href} ${is}; only HTML, plain text and JSON pages can be read`);
    }
    const { body, truncated } = await readCapped(url, response, this.#maxBytes);
    return {
      url: url.href,
      status: response.statusCode ?? 0,
      text: readableText(body, contentType, url.href),
      truncated,
    };
  }
}

/** What browse_website tells the model it could not do, and why. */
class Refusal extends Error {}

function refusal(message: string): Refusal {
  return new Refusal(`browse_website: ${message}`);
}

/** Sends the GET for `url` to `address`, and gives the response once its headers have arrived. */
function send(url: URL, address: HostAddress, signal: AbortSignal, idleMs: number): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    let response: IncomingMessage | undefined;
    const request = (url.protocol === 'https:' ? https : http).request(url, {
      headers: HEADERS,
      // A connection of its own: nothing reused from, or kept for, another fetch.
      agent: false,
      // Connect to the address that was checked; TLS still verifies the certificate for the host name.
      lookup: pinned(address),
      signal,
      timeout: idleMs,
    });
    request.on('response', (answer) => {
      response = answer;
      resolve(answer);
    });
    request.on('error', (error) =>
      reject(
        error instanceof Refusal
          ? error
          : refusal(
              `${url.href} could not be fetched (${errorCode(error)}); try again later, or another page`,
            ),
      ),
    );
    // The socket's idle timer runs while connecting, waiting for the answer and reading the body.
    request.on('timeout', () => {
      const error = refusal(
        `${url.host} sent nothing for ${seconds(idleMs)}; try again later, or another page`,
      );
      response?.destroy(error);
      request.destroy(error);
    });
    request.end();
  });
}

/** A lookup that answers every query with the one address that passed the checks. */
function pinned({ address, family }: HostAddress): LookupFunction {
  return (_host, options, callback) => {
    if (options.all) callback(null, [{ address, family }]);
    else callback(null, address, family);
  };
}

/** The body, decompressed, up to `maxBytes`: a body that goes on is cut there and the connection closed. */
async function readCapped(
  url: URL,
  response: IncomingMessage,
  maxBytes: number,
): Promise<{ body: Buffer; truncated: boolean }> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of decoded(url, response) as AsyncIterable<Buffer>) {
      if (size + chunk.byteLength > maxBytes) {
        chunks.push(chunk.subarray(0, maxBytes - size));
        return { body: Buffer.concat(chunks), truncated: true };
      }
      chunks.push(chunk);
      size += chunk.byteLength;
    }
    return { body: Buffer.concat(chunks), truncated: false };
  } catch (error) {
    if (error instanceof Refusal) throw error;
    throw refusal(`reading ${url.href} failed (${errorCode(error)}); try again, or another page`);
  } finally {
    response.destroy();
  }
}

/** The body stream, through the decompressor its Content-Encoding names. */
function decoded(url: URL, response: IncomingMessage): Readable {
  const encoding = (response.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
  const decompressor =
    encoding === 'gzip' || encoding === 'x-gzip'
      ? createGunzip()
      : encoding === 'deflate'
        ? createInflate()
        : encoding === 'br'
          ? createBrotliDecompress()
          : undefined;
  if (decompressor !== undefined) {
    // Errors reach the reader through the decompressor, which pipeline destroys with them.
    pipeline(response, decompressor, () => undefined);
    return decompressor;
  }
  if (encoding === 'identity' || encoding === '') return response;
  throw refusal(`${url.href} is encoded as ${encoding}, which browse_website cannot decode`);
}

/** `promise`, or a rejection with the signal's reason as soon as it aborts. */
function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    // Settled either way, so that its rejection after an abort is never left unhandled.
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
}

function errorCode(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string') return code;
  return error instanceof Error ? error.message : String(error);
}

function seconds(ms: number): string {
  return `${ms / 1000} s`;
}

/** A host as URLs give it, for comparison: no IPv6 brackets, no final dot. */
function bareHost(hostname: string): string {
  return hostname.replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '');
}

/** An allow-list entry in the form URLs give hosts: lower case, IDN as punycode, no brackets or final dot. */
function hostPattern(entry: string): string {
  const pattern = bareHost(entry.trim().toLowerCase());
  if (pattern === '*' || isIP(pattern) !== 0) return pattern;
  const wildcard = pattern.startsWith('*.');
  const name = wildcard ? pattern.slice(2) : pattern;
  const ascii = domainToASCII(name) || name;
  return wildcard ? `*.${ascii}` : ascii;
}

function hostMatches(host: string, pattern: string): boolean {
  if (pattern === '*') return true;
  if (pattern.startsWith('*.')) return host.endsWith(pattern.slice(1));
  return host === pattern;
}

/** IPv4 ranges that are not the public internet: this network, private, CGNAT, loopback, link-local, reserved. */
const NON_PUBLIC_IPV4: ReadonlyArray<readonly [string, number]> = [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
];

/**
 * IPv6 ranges that are not the public internet: unspecified, loopback and IPv4-compatible (::/96),
 * local-use NAT64, discard, documentation, unique local, link-local, site-local, multicast.
 */
const NON_PUBLIC_IPV6: ReadonlyArray<readonly [string, number]> = [
  ['::', 96],
  ['64:ff9b:1::', 48],
  ['100::', 64],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
];

/**
 * BlockList checks IPv4-mapped addresses (::ffff:10.0.0.1) against the IPv4 ranges itself; the IPv4
 * ranges are added again as NAT64 (64:ff9b::/96) and 6to4 (2002::/16) addresses, which also carry an
 * IPv4 address a gateway would connect to.
 */
const NON_PUBLIC = (() => {
  const list = new BlockList();
  for (const [network, prefix] of NON_PUBLIC_IPV4) {
    list.addSubnet(network, prefix, 'ipv4');
    const [high, low] = ipv4Groups(network);
    list.addSubnet(`64:ff9b::${high}:${low}`, 96 + prefix, 'ipv6');
    list.addSubnet(`2002:${high}:${low}::`, 16 + prefix, 'ipv6');
  }
  for (const [network, prefix] of NON_PUBLIC_IPV6) list.addSubnet(network, prefix, 'ipv6');
  return list;
})();

/** An IPv4 address as two IPv6 groups: 10.1.2.3 → ['a01', '203']. */
function ipv4Groups(address: string): [string, string] {
  const [a = 0, b = 0, c = 0, d = 0] = address.split('.').map(Number);
  return [((a << 8) | b).toString(16), ((c << 8) | d).toString(16)];
}

/**
 * Whether an address is private, loopback, link-local, CGNAT, unique-local, unspecified, multicast,
 * reserved or such an address in IPv6 dress (IPv4-mapped, NAT64, 6to4). What is not an IP address
 * at all counts as private: nothing unknown gets through.
 */
export function isPrivateAddress(address: string): boolean {
  // A scoped IPv6 address (fe80::1%eth0) is checked without its zone, which BlockList does not read.
  const bare = address.replace(/%.*$/, '');
  const family = isIP(bare);
  if (family === 0) return true;
  return NON_PUBLIC.check(bare, family === 4 ? 'ipv4' : 'ipv6');
}
