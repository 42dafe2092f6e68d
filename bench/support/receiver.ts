import { createServer as createHttpServer, Server } from 'node:http';
import { sleep } from './environment';

/**
 * The merchant's callback endpoint: answers 200 and notes when each reference's callback arrived (the reference
 * is the body's external_reference, merchant_transaction_id or payout_reference), and for airtime, whose request
 * calls back once per recipient, when each recipient's did.
 */
export class Receiver {
  /** performance.now() of the first callback per reference. */
  readonly arrivals = new Map<string, number>();
  /** performance.now() of the first callback per airtime recipient, keyed by recipientKey(). */
  readonly recipientArrivals = new Map<string, number>();
  /** performance.now() of every callback, in arrival order. */
  readonly times: number[] = [];
  /** performance.now() of each reference's first callback, in arrival order. */
  readonly firstTimes: number[] = [];
  duplicates = 0;
  uniqueReferences = 0;
  base = '';
  private server: Server | null = null;
  private readonly wallOffset = Date.now() - performance.now();

  get count(): number {
    return this.times.length;
  }

  wallOf(t: number): number {
    return t + this.wallOffset;
  }

  async start(): Promise<this> {
    this.server = createHttpServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const at = performance.now();
        let reference = '';
        try {
          const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
          reference = String(body.external_reference ?? body.merchant_transaction_id ?? body.payout_reference ?? '');
          if (body.phone_number !== undefined && body.external_reference !== undefined) {
            const key = recipientKey(String(body.external_reference), String(body.phone_number));
            if (!this.recipientArrivals.has(key)) this.recipientArrivals.set(key, at);
          }
        } catch {
          // not JSON: counted, not matched
        }
        this.times.push(at);
        if (this.arrivals.has(reference)) this.duplicates++;
        else {
          this.arrivals.set(reference, at);
          this.firstTimes.push(at);
          this.uniqueReferences++;
        }
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"acknowledgement_code":"900"}');
      });
    });
    this.server.keepAliveTimeout = 60_000;
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.base = `http://127.0.0.1:${(this.server.address() as { port: number }).port}`;
    return this;
  }

  async close(): Promise<void> {
    if (!this.server) return;
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server!.close(() => resolve()));
  }

  /** Waits until every reference has called back, or `timeoutMs` has passed. */
  async waitFor(references: string[], timeoutMs = 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline && !references.every((r) => this.arrivals.has(r))) await sleep(20);
  }
}

/** An airtime recipient's callback key: the document's idempotency key, external_reference plus phone_number. */
export function recipientKey(reference: string, phoneNumber: string): string {
  return `${reference} ${phoneNumber.replace(/^\+/, '')}`;
}
