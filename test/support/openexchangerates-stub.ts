import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';

/** How the stub answers `latest.json`: the rates as written, an HTTP 500, no answer at all, or text that is not JSON. */
export type OxrAnswer = 'rates' | 'http500' | 'silence' | 'garbage';

/**
 * Open Exchange Rates played locally (GET /api/latest.json?app_id=…). `ratesJson` is sent verbatim, so a test can
 * write numbers with more digits than a JS float holds; `{{timestamp}}` in it becomes the answer's unix time minus
 * `ageSeconds`.
 */
export class OpenExchangeRatesStub {
  answer: OxrAnswer = 'rates';
  ageSeconds = 0;
  readonly appIds: string[] = [];
  private readonly server: Server;

  constructor(public ratesJson: string) {
    this.server = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://stub');
      if (url.pathname !== '/api/latest.json') {
        res.writeHead(404).end();
        return;
      }
      this.appIds.push(url.searchParams.get('app_id') ?? '');
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
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
