import { Injectable } from '@nestjs/common';
import { request as httpRequest, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
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

/**
 * POSTs to the address that was checked, not to whatever the host name resolves to by the time the socket opens:
 * the socket's lookup answers with the checked address, while Host and TLS SNI (and so certificate checks) keep
 * the URL's host name.
 */
export function pinnedPost(target: CallbackTarget, headers: Record<string, string>, body: string, timeoutMs: number): Promise<PostResult> {
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
    agent: false,
  };
  return new Promise((resolve, reject) => {
    const req = (url.protocol === 'https:' ? httpsRequest : httpRequest)(options, (res) => {
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
    req.on('error', reject);
    req.end(body);
  });
}
