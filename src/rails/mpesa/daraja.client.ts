import { constants, publicEncrypt, X509Certificate } from 'node:crypto';
import type { RailCircuit } from '../rail-health';
import type { MpesaConfig } from '../rails-config';
import { parseOperatorJson } from '../operator-json';

/** The operator took the request; its result comes later (or now, for an STK query). */
export type DarajaBody = Record<string, unknown>;

/** The operator did not take the request and said so: sending it again later is safe (spike arrest, a busy payer). */
export class DarajaBusy extends Error {}

/** Busy about one payer or request (a locked subscriber, a push still being processed): the rail itself is up. */
export class DarajaRequestBusy extends DarajaBusy {}

/** The operator refused the request for good (a bad number, a bad amount): an outcome, not a fault. */
export class DarajaRefused extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Daraja already holds a request under this OriginatorConversationID ("Duplicate OriginatorConversationID.",
 * `500.002.1001`, on the "Business To Customer" page): it took ours earlier, so its fate is asked for, never failed.
 */
export class DarajaDuplicate extends Error {}

/** The call's answer was lost (time-out, reset, a 5xx without Daraja's error code): the operator may have taken it. */
export class DarajaUnknown extends Error {}

/**
 * Gateway errors that are not outcomes: Daraja did not act, and asks to be asked again later (spike arrest and quota
 * violation on every API page's error table).
 */
const BUSY_CODES = new Set(['500.003.02', '500.003.03', '503.001.01']);
/** "Unable to lock subscriber" (M-Pesa Express), and the same code's other words: about one request, not the rail. */
const REQUEST_BUSY_CODE = '500.001.1001';
const DUPLICATE_CODE = '500.002.1001';
/** "Invalid Access Token": `404.001.03` on the API pages, `400.003.01` on "Transaction Status". */
const INVALID_TOKEN = new Set(['404.001.03', '400.003.01']);
const TOKEN_MARGIN_MS = 60_000;
const NAIROBI_OFFSET_MS = 3 * 3600_000;

/**
 * A thin typed Daraja client (the npm SDKs are years old and speak B2C v1): the OAuth token cached and renewed a
 * minute before it expires, STK passwords, the initiator's SecurityCredential, a time-out on every call, and each
 * failure classified by what it means for a retry. Every call goes through M-Pesa's circuit: not made while it is
 * open, and counted against it when Daraja is down, busy or lost the answer.
 */
export class DarajaClient {
  private token: { value: string; expiresAt: number } | null = null;
  private tokenRequest: Promise<string> | null = null;
  private securityCredential: string | null = null;

  constructor(
    private readonly config: MpesaConfig,
    private readonly timeoutMs: number,
    private readonly circuit: RailCircuit,
    private readonly now: () => number = Date.now,
  ) {}

  /** Timestamp (YYYYMMDDHHmmss, Nairobi time) and Password = base64(shortcode + passkey + timestamp) of an STK call. */
  stkPassword(at = this.now()): { Password: string; Timestamp: string } {
    const timestamp = new Date(at + NAIROBI_OFFSET_MS).toISOString().replace(/\D/g, '').slice(0, 14);
    const password = Buffer.from(`${this.config.shortcode}${this.config.passkey}${timestamp}`).toString('base64');
    return { Password: password, Timestamp: timestamp };
  }

  /** The initiator password encrypted with the operator certificate's public key, RSA PKCS#1 v1.5, base64. */
  initiatorCredential(): string {
    if (!this.securityCredential) {
      const key = new X509Certificate(this.config.certificate).publicKey;
      this.securityCredential = publicEncrypt(
        { key, padding: constants.RSA_PKCS1_PADDING },
        Buffer.from(this.config.initiatorPassword),
      ).toString('base64');
    }
    return this.securityCredential;
  }

  /** POSTs a Daraja API call with a valid token; an invalid-token answer renews the token and tries once more. */
  async post(path: string, body: DarajaBody): Promise<DarajaBody> {
    try {
      return await this.send(path, body, await this.accessToken());
    } catch (error) {
      if (!(error instanceof DarajaRefused) || !INVALID_TOKEN.has(error.code)) throw error;
      this.token = null;
      try {
        return await this.send(path, body, await this.accessToken());
      } catch (again) {
        if (again instanceof DarajaRefused && INVALID_TOKEN.has(again.code)) throw new DarajaBusy('Daraja refused a fresh token');
        throw again;
      }
    }
  }

  /**
   * A valid token. Failing to get one is never the request's outcome (the request was not sent): it is BUSY, so our
   * own credential trouble delays money rather than failing it.
   */
  private async accessToken(): Promise<string> {
    if (this.token && this.token.expiresAt - TOKEN_MARGIN_MS > this.now()) return this.token.value;
    // One token request at a time: concurrent calls share it.
    this.tokenRequest ??= this.fetchToken().finally(() => (this.tokenRequest = null));
    try {
      return await this.tokenRequest;
    } catch (error) {
      throw error instanceof DarajaBusy ? error : new DarajaBusy(`no Daraja token: ${(error as Error).message}`);
    }
  }

  private async fetchToken(): Promise<string> {
    const basic = Buffer.from(`${this.config.consumerKey}:${this.config.consumerSecret}`).toString('base64');
    const answer = await this.call(`${this.config.baseUrl}/oauth/v1/generate?grant_type=client_credentials`, {
      method: 'GET',
      headers: { Authorization: `Basic ${basic}` },
    });
    const token = typeof answer.access_token === 'string' ? answer.access_token : null;
    // Some deployments send expires_in as a string.
    const seconds = Number(answer.expires_in);
    if (!token || !Number.isFinite(seconds)) throw new DarajaBusy('Daraja answered the token request without a token');
    this.token = { value: token, expiresAt: this.now() + seconds * 1000 };
    return token;
  }

  private send(path: string, body: DarajaBody, token: string): Promise<DarajaBody> {
    return this.call(`${this.config.baseUrl}${path}`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
  }

  private async call(url: string, init: RequestInit): Promise<DarajaBody> {
    if (!(await this.circuit.admits())) throw new DarajaBusy('M-Pesa is unavailable (its circuit is open): not called');
    try {
      const body = await this.exchange(url, init);
      await this.circuit.succeeded();
      return body;
    } catch (error) {
      const down = error instanceof DarajaUnknown || (error instanceof DarajaBusy && !(error instanceof DarajaRequestBusy));
      await (down ? this.circuit.failed((error as Error).message) : this.circuit.succeeded());
      throw error;
    }
  }

  private async exchange(url: string, init: RequestInit): Promise<DarajaBody> {
    let response: Response;
    let text: string;
    try {
      response = await fetch(url, { ...init, signal: AbortSignal.timeout(this.timeoutMs) });
      text = await response.text();
    } catch (error) {
      throw new DarajaUnknown(`Daraja did not answer: ${(error as Error).message}`);
    }
    const body: DarajaBody | null = parseOperatorJson(text);
    const errorCode = typeof body?.errorCode === 'string' ? body.errorCode : null;
    const message = typeof body?.errorMessage === 'string' ? body.errorMessage : `HTTP ${response.status}`;
    if (errorCode === DUPLICATE_CODE) throw new DarajaDuplicate(`${errorCode} ${message}`);
    if (errorCode === REQUEST_BUSY_CODE) throw new DarajaRequestBusy(`${errorCode} ${message}`);
    if (errorCode && BUSY_CODES.has(errorCode)) throw new DarajaBusy(`${errorCode} ${message}`);
    if (response.status === 429 || response.status === 503) throw new DarajaBusy(`HTTP ${response.status}`);
    if (!response.ok) {
      // A 5xx without Daraja's error code (a proxy's page, a crash) says nothing about whether the request was taken.
      if (response.status >= 500 || !errorCode) throw new DarajaUnknown(`Daraja answered HTTP ${response.status}`);
      throw new DarajaRefused(errorCode, message);
    }
    if (!body) throw new DarajaUnknown(`Daraja answered HTTP ${response.status} without JSON`);
    return body;
  }
}
