import type { RailCircuit } from '../rail-health';
import type { AfricasTalkingConfig } from '../rails-config';
import { parseOperatorJson } from '../operator-json';

/** Africa's Talking did not take the call and said so (our key refused, throttled, down): safe to send later. */
export class AfricasTalkingBusy extends Error {}

/** Africa's Talking refused the call for good (a 4xx with its reason): an outcome, not a fault. */
export class AfricasTalkingRefused extends Error {}

/** The call's answer was lost (time-out, reset, a 5xx, an unreadable body): Africa's Talking may have taken it. */
export class AfricasTalkingUnknown extends Error {}

/** One top-up as Africa's Talking takes it: the number in the international form (+254…) and "<currency> <amount>". */
export interface AirtimeRecipient {
  phoneNumber: string;
  amount: string;
}

/** Africa's Talking's answer about one number of a send. */
export interface AirtimeSendResponse {
  phoneNumber: string;
  /** "Sent" (taken: the final status comes later) or "Failed". */
  status: string;
  /** Its id for the top-up; null for a number it refused ("None"). */
  requestId: string | null;
  errorMessage: string | null;
}

export interface AirtimeSendAnswer {
  errorMessage: string | null;
  responses: AirtimeSendResponse[];
}

/**
 * query/transaction/find's answer: the query's own status ("Success" when it found the transaction, "Failed" when
 * not), and the transaction's status, description, number and value.
 */
export interface FoundTransaction {
  queryStatus: string | null;
  status: string | null;
  description: string | null;
  destination: string | null;
  value: string | null;
  /** When the transaction was made, as written (the page's transactionDate, or creationTime). */
  transactionDate: string | null;
  /** The answer as received. */
  answer: Record<string, unknown>;
}

type Json = Record<string, unknown>;

/**
 * A thin typed Africa's Talking client for the two calls airtime needs: the form-encoded send, with the
 * Idempotency-Key header, and query/transaction/find. Every call is bounded by the rail's time-out, and its failure
 * says whether the request was taken (docs/decisions.md says why this is not the `africastalking` package). Every
 * call goes through the rail's circuit: not made while it is open, counted against it when Africa's Talking is down,
 * busy, refuses our key or lost the answer.
 */
export class AfricasTalkingClient {
  constructor(
    private readonly config: AfricasTalkingConfig,
    private readonly circuit: RailCircuit,
  ) {}

  async sendAirtime(recipients: AirtimeRecipient[], idempotencyKey: string): Promise<AirtimeSendAnswer> {
    const json = await this.call('/version1/airtime/send', {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'Idempotency-Key': idempotencyKey },
      body: new URLSearchParams({ username: this.config.username, recipients: JSON.stringify(recipients) }).toString(),
    });
    const responses = Array.isArray(json.responses) ? (json.responses as Json[]) : [];
    return {
      errorMessage: message(json.errorMessage),
      responses: responses.map((r) => ({
        phoneNumber: String(r.phoneNumber ?? ''),
        status: String(r.status ?? ''),
        requestId: message(r.requestId),
        errorMessage: message(r.errorMessage),
      })),
    };
  }

  async findTransaction(transactionId: string): Promise<FoundTransaction> {
    const query = new URLSearchParams({ username: this.config.username, transactionId });
    const json = await this.call(`/query/transaction/find?${query.toString()}`, { method: 'GET', headers: {} });
    const data = (json.data && typeof json.data === 'object' ? json.data : {}) as Json;
    return {
      queryStatus: text(json.status),
      status: text(data.status),
      description: message(data.description) ?? message(data.errorMessage) ?? message(json.errorMessage),
      destination: text(data.destination),
      value: text(data.value),
      transactionDate: text(data.transactionDate) ?? text(data.creationTime),
      answer: json,
    };
  }

  /** The application's balance ("Application Data": GET /version1/user, `UserData.balance` as "KES 1785.50"). */
  async applicationBalance(): Promise<{ balance: string | null; answer: Record<string, unknown> }> {
    const query = new URLSearchParams({ username: this.config.username });
    const json = await this.call(`/version1/user?${query.toString()}`, { method: 'GET', headers: {} });
    const data = (json.UserData && typeof json.UserData === 'object' ? json.UserData : {}) as Json;
    return { balance: text(data.balance), answer: json };
  }

  private async call(path: string, init: { method: string; headers: Record<string, string>; body?: string }): Promise<Json> {
    if (!(await this.circuit.admits())) throw new AfricasTalkingBusy("Africa's Talking is unavailable (its circuit is open): not called");
    let response: Response;
    let body: string;
    try {
      response = await fetch(`${this.config.baseUrl}${path}`, {
        ...init,
        headers: { ...init.headers, apiKey: this.config.apiKey, Accept: 'application/json' },
        signal: AbortSignal.timeout(this.config.timeoutMs),
      });
      body = await response.text();
    } catch (error) {
      const reason = `Africa's Talking did not answer: ${(error as Error).message}`;
      await this.circuit.failed(reason);
      throw new AfricasTalkingUnknown(reason);
    }
    const { status } = response;
    // Our key refused, throttled or down counts against the rail; any other answer, a refusal included, shows it up.
    await (status === 401 || status === 403 || status === 429 || status >= 500
      ? this.circuit.failed(`Africa's Talking answered HTTP ${status}`)
      : this.circuit.succeeded());
    if (status === 401 || status === 403) throw new AfricasTalkingBusy(`Africa's Talking refused our API key (HTTP ${status})`);
    if (status === 429 || status === 503) throw new AfricasTalkingBusy(`Africa's Talking is busy (HTTP ${status})`);
    if (status >= 500) throw new AfricasTalkingUnknown(`Africa's Talking answered HTTP ${status}`);
    // Its refusals come as plain text ("Invalid phone number") or as JSON with an errorMessage.
    const json = parseOperatorJson(body);
    if (status >= 400) throw new AfricasTalkingRefused(message(json?.errorMessage) ?? (body.trim().slice(0, 200) || `HTTP ${status}`));
    if (!json) throw new AfricasTalkingUnknown(`Africa's Talking answered HTTP ${status} with an unreadable body`);
    return json;
  }
}

const text = (value: unknown): string | null => (value === undefined || value === null || value === '' ? null : String(value));

/** Africa's Talking writes "None" where there is no value: no error, or no requestId for a number it refused. */
const message = (value: unknown): string | null => {
  const written = text(value);
  return written === 'None' ? null : written;
};
