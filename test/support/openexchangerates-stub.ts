import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { closeServer } from './gateway-fixtures';

/**
 * How the stub answers `latest.json`: the rates as written, one of the documented errors (docs.openexchangerates.org
 * "Errors"), an HTTP 500, no answer at all, or text that is not JSON.
 */
export type OxrAnswer = 'rates' | 'not_allowed' | 'access_restricted' | 'http500' | 'silence' | 'garbage';

/** docs.openexchangerates.org "Errors": each message's HTTP status. */
const ERROR_STATUS: Record<string, number> = {
  not_found: 404,
  missing_app_id: 401,
  invalid_app_id: 401,
  not_allowed: 429,
  access_restricted: 403,
  invalid_base: 400,
};

/** The documented error body ("All Open Exchange Rates API errors currently use the same format"). */
function errorBody(message: string): string {
  return JSON.stringify({ error: true, status: ERROR_STATUS[message], message, description: `Stub: ${message.replace(/_/g, ' ')}.` });
}

/**
 * Open Exchange Rates played locally (GET /api/latest.json?app_id=…, docs.openexchangerates.org "latest.json"):
 * only `appId` is a valid app id (else 401 invalid_app_id, or missing_app_id without one), any other route is
 * 404 not_found, and `base` other than USD is 400 invalid_base (the free plan). `ratesJson` is sent verbatim, so a
 * test can write numbers with more digits than a JS float holds; `{{timestamp}}` in it becomes the answer's unix
 * time minus `ageSeconds`.
 */
export class OpenExchangeRatesStub {
  answer: OxrAnswer = 'rates';
  ageSeconds = 0;
  readonly appIds: string[] = [];
  private readonly server: Server;

  constructor(
    public ratesJson: string,
    readonly appId = 'oxr-app-id',
  ) {
    this.server = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://stub');
      const error = (message: string) =>
        res.writeHead(ERROR_STATUS[message], { 'content-type': 'application/json' }).end(errorBody(message));
      if (url.pathname !== '/api/latest.json') return error('not_found');
      const appId = url.searchParams.get('app_id');
      this.appIds.push(appId ?? '');
      if (!appId) return error('missing_app_id');
      if (appId !== this.appId) return error('invalid_app_id');
      if ((url.searchParams.get('base') ?? 'USD') !== 'USD') return error('invalid_base');
      if (this.answer === 'not_allowed' || this.answer === 'access_restricted') return error(this.answer);
      if (this.answer === 'silence') return;
      if (this.answer === 'http500') {
        res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":true,"status":500}');
        return;
      }
      const timestamp = String(Math.floor(Date.now() / 1000) - this.ageSeconds);
      const body = this.answer === 'garbage' ? '<html>maintenance</html>' : this.ratesJson.replace('{{timestamp}}', timestamp);
      res.writeHead(200, { 'content-type': 'application/json' }).end(body);
    });
  }

  get baseUrl(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/api`;
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return this;
  }

  async close(): Promise<void> {
    await closeServer(this.server);
  }
}
