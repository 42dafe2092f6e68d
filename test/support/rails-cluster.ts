import { AfricasTalkingStub } from './africastalking-stub';
import { AirtimeMerchant, createAirtimeMerchant } from './airtime-fixtures';
import { DarajaStub, STUB_CREDENTIALS } from './daraja-stub';
import { createPayoutMerchant } from './disbursement-fixtures';
import { closeTogether, GatewayMerchant } from './gateway-fixtures';
import { JengaStub } from './jenga-stub';
import { ProcessCluster } from './process-cluster';

/**
 * A process cluster (one api, compiled workers) with M-Pesa played by the Daraja stub, the bank by the Jenga stub
 * and, when asked, airtime by the Africa's Talking stub: payouts, charges and airtime are accepted by the api and
 * sent by the workers, as in production.
 */
export class RailsCluster extends ProcessCluster {
  readonly daraja = new DarajaStub();
  readonly jenga = new JengaStub();
  readonly africastalking = new AfricasTalkingStub();
  merchant!: GatewayMerchant;
  /** A merchant of its own for airtime (its float moves by airtime alone), made when started with `airtime`. */
  airtimeMerchant?: AirtimeMerchant;

  /**
   * Starts everything, with `workers` worker processes and the variables in `env` on top of the rails'; with
   * `airtime`, airtime goes through Africa's Talking (its stub) and an airtime merchant is made.
   */
  async start(workers: number, env: Record<string, string> = {}, options: { airtime?: boolean } = {}): Promise<this> {
    await Promise.all([this.daraja.start(), this.jenga.start(), this.africastalking.start()]);
    await this.launch({
      workers,
      env: (apiUrl) => {
        this.africastalking.statusCallbackUrl = `${apiUrl}/rails/africastalking/airtime/status`;
        return {
          RAIL_MOBILE_MONEY: 'mpesa',
          ...STUB_CREDENTIALS,
          MPESA_BASE_URL: this.daraja.baseUrl,
          MPESA_CALLBACK_BASE_URL: apiUrl,
          MPESA_ALLOWED_IPS: '127.0.0.1',
          MPESA_TIMEOUT_MS: '2000',
          ...this.jenga.env(),
          JENGA_TIMEOUT_MS: '2000',
          ...(options.airtime ? { ...this.africastalking.env(), AFRICASTALKING_TIMEOUT_MS: '2000' } : {}),
          RAIL_RECONCILE_AFTER_MS: '500',
          PAYOUT_RECONCILE_AFTER_MS: '500',
          OUTBOX_LOST_JOB_AFTER_MS: '2000',
          CALLBACK_RETRY_DELAYS_MS: '300,600,900,1200',
          ...env,
        };
      },
    });
    this.merchant = await createPayoutMerchant(this.setup, { float: '1000000' });
    if (options.airtime) this.airtimeMerchant = await createAirtimeMerchant(this.setup, this.receiver);
    return this;
  }

  /** POSTs to the api as the merchant (or another one). */
  post(path: string, body: unknown, merchant: GatewayMerchant = this.merchant): Promise<Response> {
    return fetch(`${this.apiUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-access-token': merchant.token },
      body: JSON.stringify(body),
    });
  }

  /** The operators' stubs close with the cluster: a process still calling one gets its connection refused. */
  async close(): Promise<void> {
    await closeTogether(
      () => super.close(),
      () => this.daraja.close(),
      () => this.jenga.close(),
      () => this.africastalking.close(),
    );
  }
}
