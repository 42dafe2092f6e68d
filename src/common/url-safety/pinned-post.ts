import { Injectable } from '@nestjs/common';
import { Agent as HttpAgent, request as httpRequest, type RequestOptions } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { callbackUrlProblem, CallbackTarget, Lookup, resolvedCallbackUrlProblem, systemLookup } from './callback-url';

/** Resolves callback hosts; a class of its own so tests can make a host resolve where they need it to. */
@Injectable()
export class CallbackResolver {
  lookup: Lookup = systemLookup;

  /**
   * Why a callback URL given with a request is refused, or null. Host names are resolved here in production only
   * (sandbox receivers may not resolve yet); every mode checks them again at delivery.
   */
  async entryProblem(url: string, isSandbox: boolean): Promise<string | null> {
    return callbackUrlProblem(url, isSandbox) ?? (isSandbox ? null : resolvedCallbackUrlProblem(url, false, this.lookup));
  }
}

export interface PostResult {
  status: number;
  body: string;
}

const MAX_BODY = 10_000;
/** Idle kept-alive connections close after this; below the 5 s most servers (Node's default among them) allow. */
const IDLE_CONNECTION_MS = 4_000;
/** Destinations whose connections are kept; the least recently used beyond this are let go. */
const MAX_DESTINATIONS = 512;
/** A kept-alive connection the receiver had closed by the time it was reused fails with one of these. */
const STALE_CONNECTION = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED']);

/**
 * POSTs callbacks over kept-alive connections, one pool per destination *and checked address*: a connection is
 * opened to the address that was checked, not to whatever the host name resolves to by the time the socket opens
 * (the socket's lookup answers with the checked address, while Host and TLS SNI, and so certificate checks, keep
 * the URL's host name), and it is reused only for a delivery whose own resolution checked that same address. So a
 * pooled connection never reaches an address the rules refuse, and every delivery still resolves its host.
 */
export class PinnedConnections {
  private readonly pools = new Map<string, HttpAgent>();

  async post(target: CallbackTarget, headers: Record<string, string>, body: string, timeoutMs: number): Promise<PostResult> {
    const agent = this.poolFor(target);
    try {
      return await send(target, agent, headers, body, timeoutMs);
    } catch (error) {
      // A receiver may close an idle connection just as we reuse it: that request failed before any answer, so it
      // is sent once more (merchants deduplicate by X-Event-Id in any case).
      if (error instanceof StaleConnection) return send(target, agent, headers, body, timeoutMs);
      throw error;
    }
  }

  close(): void {
    for (const agent of this.pools.values()) agent.destroy();
    this.pools.clear();
  }

  private poolFor(target: CallbackTarget): HttpAgent {
    const key = `${target.url.protocol}//${target.url.host} ${target.address}`;
    let agent = this.pools.get(key);
    if (agent)
      this.pools.delete(key); // re-inserted below: the map's order is the order of last use
    else {
      const options = { keepAlive: true, timeout: IDLE_CONNECTION_MS, scheduling: 'lifo' as const };
      agent = target.url.protocol === 'https:' ? new HttpsAgent(options) : new HttpAgent(options);
    }
    this.pools.set(key, agent);
    // The least recently used pool is dropped, not destroyed: its busy connections finish, its idle ones time out.
    if (this.pools.size > MAX_DESTINATIONS) this.pools.delete(this.pools.keys().next().value!);
    return agent;
  }
}

/** A reused connection that turned out to be closed before any answer came. */
class StaleConnection extends Error {}

/** One POST on the agent's pool. */
function send(
  target: CallbackTarget,
  agent: HttpAgent,
  headers: Record<string, string>,
  body: string,
  timeoutMs: number,
): Promise<PostResult> {
  const pinned: LookupFunction = (_hostname, options, callback) => {
    if (options.all) callback(null, [{ address: target.address, family: target.family }]);
    else callback(null, target.address, target.family);
  };
  const { url } = target;
  const options: RequestOptions = {
    method: 'POST',
    hostname: url.hostname.replace(/^\[|\]$/g, ''),
    port: url.port || undefined,
    path: `${url.pathname}${url.search}`,
    headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
    lookup: pinned,
    timeout: timeoutMs,
    agent,
  };
  return new Promise((resolve, reject) => {
    let answered = false;
    const req = (url.protocol === 'https:' ? httpsRequest : httpRequest)(options, (res) => {
      answered = true;
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        if (size < MAX_BODY) chunks.push(chunk);
        size += chunk.length;
      });
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          body: Buffer.concat(chunks).toString('utf8').slice(0, MAX_BODY),
        }),
      );
      res.on('error', reject);
    });
    const deadline = setTimeout(() => req.destroy(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    req.on('close', () => clearTimeout(deadline));
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', (error: NodeJS.ErrnoException) =>
      reject(req.reusedSocket && !answered && STALE_CONNECTION.has(error.code ?? '') ? new StaleConnection(error.message) : error),
    );
    req.end(body);
  });
}
