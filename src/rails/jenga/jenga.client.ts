import { createSign } from 'node:crypto';
import type { RailCircuit } from '../rail-health';
import type { JengaConfig } from '../rails-config';
import { parseOperatorJson } from '../operator-json';

export type JengaBody = Record<string, unknown>;

/** Jenga did not take the request and said so (throttled, down for maintenance, no token): safe to send later. */
export class JengaBusy extends Error {}

/** Jenga refused the request for good (an unknown account, a bad amount): an outcome, not a fault. */
export class JengaRefused extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** The call's answer was lost (time-out, reset, a 5xx): Jenga may have taken it. */
export class JengaUnknown extends Error {}

/** The send's window closed before it left (the process stalled): not sent, so Jenga's "not found" stays true. */
export class JengaSendWindowPassed extends Error {}

const TOKEN_MARGIN_MS = 60_000;

/**
 * A thin typed Jenga (Equity, Finserve) client: the merchant token ("Generate Token": `Api-Key` header,
 * `{merchantCode, consumerSecret}`) cached and renewed before it expires, the `Signature` header (RSA-SHA256 over
 * each call's documented fields, "Generate Signature") on every call, a time-out on every call. Every call goes
 * through Jenga's circuit: not made while it is open, and counted against it when Jenga is down, busy or lost the
 * answer.
 */
export class JengaClient {
  private token: { value: string; expiresAt: number } | null = null;
  private tokenRequest: Promise<string> | null = null;

  constructor(
    private readonly config: JengaConfig,
    private readonly timeoutMs: number,
    private readonly circuit: RailCircuit,
    private readonly now: () => number = Date.now,
  ) {}

  /** base64 RSA-SHA256 with our private key over the fields Jenga names, concatenated. */
  signature(fields: string[]): string {
    return createSign('RSA-SHA256').update(fields.join('')).sign(this.config.privateKey, 'base64');
  }

  /**
   * A signed call: `signed` is this call's documented signature (every Jenga call we make has one). A call given
   * `notAfter` (epoch ms) is not made once that has passed, checked as late as we can, just before it leaves.
   */
  async call(method: 'GET' | 'POST', path: string, body: JengaBody | null, signed: string, notAfter?: number): Promise<JengaBody> {
    const token = await this.accessToken();
    const headers: Record<string, string> = { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', Signature: signed };
    const { status, json } = await this.fetch(
      `${this.config.baseUrl}${path}`,
      { method, headers, body: body ? JSON.stringify(body) : undefined },
      notAfter,
    );
    if (status === 401) {
      this.token = null;
      throw new JengaBusy('Jenga refused our token');
    }
    if (status === 429 || status === 503) throw new JengaBusy(`HTTP ${status}`);
    if (status >= 500 || !json) throw new JengaUnknown(`Jenga answered HTTP ${status}`);
    if (status >= 400 || json.status === false) {
      throw new JengaRefused(String(json.code ?? status), String(json.message ?? `HTTP ${status}`));
    }
    return json;
  }

  private async accessToken(): Promise<string> {
    if (this.token && this.token.expiresAt - TOKEN_MARGIN_MS > this.now()) return this.token.value;
    this.tokenRequest ??= this.fetchToken().finally(() => (this.tokenRequest = null));
    try {
      return await this.tokenRequest;
    } catch (error) {
      // Never the request's outcome: it was not sent.
      throw new JengaBusy(`no Jenga token: ${(error as Error).message}`);
    }
  }

  private async fetchToken(): Promise<string> {
    const { status, json } = await this.fetch(`${this.config.baseUrl}/authentication/api/v3/authenticate/merchant`, {
      method: 'POST',
      headers: { 'Api-Key': this.config.apiKey, 'Content-Type': 'application/json' },
      body: JSON.stringify({ merchantCode: this.config.merchantCode, consumerSecret: this.config.consumerSecret }),
    });
    const token = typeof json?.accessToken === 'string' ? json.accessToken : null;
    if (status !== 200 || !token) throw new Error(`authentication answered HTTP ${status}`);
    // "Generate Token" documents expiresIn as the expiry's date-time; read seconds too, as older deployments sent.
    const expires = /^\d+$/.test(String(json!.expiresIn))
      ? this.now() + Number(json!.expiresIn) * 1000
      : Date.parse(String(json!.expiresIn));
    this.token = { value: token, expiresAt: Number.isFinite(expires) ? expires : this.now() + 5 * 60_000 };
    return token;
  }

  private async fetch(url: string, init: RequestInit, notAfter?: number): Promise<{ status: number; json: JengaBody | null }> {
    if (!(await this.circuit.admits())) throw new JengaBusy('Jenga is unavailable (its circuit is open): not called');
    if (notAfter !== undefined && this.now() > notAfter) {
      throw new JengaSendWindowPassed(`its send window closed ${this.now() - notAfter} ms before it could leave: not sent`);
    }
    let response: Response;
    let text: string;
    try {
      response = await fetch(url, { ...init, signal: AbortSignal.timeout(this.timeoutMs) });
      text = await response.text();
    } catch (error) {
      const message = `Jenga did not answer: ${(error as Error).message}`;
      await this.circuit.failed(message);
      throw new JengaUnknown(message);
    }
    // Throttled or down (429, 5xx) counts against the rail; any other answer, a refusal included, shows it up.
    await (response.status === 429 || response.status >= 500
      ? this.circuit.failed(`Jenga answered HTTP ${response.status}`)
      : this.circuit.succeeded());
    return { status: response.status, json: parseOperatorJson(text) };
  }
}
