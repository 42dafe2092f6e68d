import {
  BadRequestException,
  ConflictException,
  GoneException,
  Inject,
  Injectable,
  NotFoundException,
  ServiceUnavailableException,
} from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { randomBytes, randomUUID } from 'node:crypto';
import { DataSource, EntityManager } from 'typeorm';
import { GatewayPrincipal } from '../auth/gateway/gateway-principal';
import { callbackUrlProblem } from '../common/url-safety/callback-url';
import { CallbackResolver } from '../common/url-safety/pinned-post';
import { GatewayError } from '../common/errors/gateway-error';
import { requestFingerprint } from '../common/fingerprint';
import { amountProblem, formatAmount, Money } from '../common/money';
import { APP_CONFIG, type AppConfig } from '../infra/config/app-config';
import { TOPICS } from '../infra/queue/queues';
import { RailHealth } from '../rails/rail-health';
import { MOBILE_MONEY_RAIL, type MobileMoneyRail } from '../rails/mobile-money.rail';
import { CheckoutInitiateDto, CheckoutPayDto } from './checkout.dto';
import {
  CHECKOUT_STATUS,
  checkoutResultOf,
  CheckoutSessionRow,
  isExpired,
  isOpen,
  paidAmount,
  SELECT_CHECKOUT,
  wholeAmount,
} from '../collections/checkout-session';
import { CheckoutSessionsService } from '../collections/checkout-sessions.service';
import { PAYMENT_STATUS } from '../collections/payment';
import { PaymentsService } from '../collections/payments.service';
import { PaymentsRepository } from '../collections/payments.repository';
import { SplitSettlementsService } from '../split-settlements/split-settlements.service';
import { collectionRefusalError } from '../collections/collecting-service';
import { merchantFee } from '../collections/merchant-fee';
import { checkoutInitiation, InitiatedCheckout } from './checkout-initiation';

/** The country a payment comes from, by the currency of the service it pays (the page does not ask). */
const COUNTRY_OF_CURRENCY: Record<string, string> = {
  KES: 'KEN',
  UGX: 'UGA',
  TZS: 'TZA',
  RWF: 'RWA',
  NGN: 'NGA',
  GHS: 'GHA',
  ZAR: 'ZAF',
};

/**
 * Hosted checkout (collection document §2–§4, provider contract §5): the merchant opens a session, the payer
 * pays it on our page in one or several mobile-money payments, and the merchant learns the result by callback.
 */
@Injectable()
export class CheckoutService {
  private readonly initiation: ReturnType<typeof checkoutInitiation>;

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(MOBILE_MONEY_RAIL) private readonly rail: MobileMoneyRail,
    private readonly splits: SplitSettlementsService,
    private readonly payments: PaymentsRepository,
    private readonly outcomes: PaymentsService,
    private readonly sessions: CheckoutSessionsService,
    private readonly resolver: CallbackResolver,
    private readonly health: RailHealth,
  ) {
    this.initiation = checkoutInitiation(db);
  }

  /**
   * Opens a session in one database call, shared with the sessions opened at the same moment (group commit);
   * idempotent on merchant_transaction_id like a charge on its reference.
   */
  async initiate(principal: GatewayPrincipal, dto: CheckoutInitiateDto) {
    const fingerprint = requestFingerprint('CHECKOUT', { ...dto });
    // redirect_url is only followed by the payer's browser; callback_url is posted to by our workers.
    const redirectProblem = callbackUrlProblem(dto.redirect_url, this.config.isSandbox);
    const callbackProblem = redirectProblem ? null : await this.resolver.entryProblem(dto.callback_url, this.config.isSandbox);
    const splits = this.splits.read(dto.extra_data);
    const requestError = redirectProblem
      ? GatewayError.validation(`redirect_url ${redirectProblem}`)
      : callbackProblem
        ? GatewayError.validation(`callback_url ${callbackProblem}`)
        : splits.error;
    const down = await this.health.refusal(this.rail.operator);
    if (down) throw GatewayError.unavailable(down);
    const minuteMs = this.config.isSandbox ? this.config.sandboxMinuteMs : 60_000;
    const answer = await this.initiation.call(principal.clientId, {
      service_code: dto.service_code,
      fingerprint,
      caller_check: redirectProblem || callbackProblem ? 'REQUEST' : splits.error ? 'SPLITS' : null,
      session: {
        checkout_reference: newCheckoutReference(),
        merchant_transaction_id: dto.merchant_transaction_id,
        amount: new Money(dto.amount).toFixed(),
        payer_name: dto.payer_name,
        payer_email: dto.payer_email,
        payer_msisdn: dto.payer_msisdn,
        account_number: dto.account_number,
        narration: dto.narration,
        callback_url: dto.callback_url,
        redirect_url: dto.redirect_url,
        extra_data: dto.extra_data ?? {},
        expires_at: new Date(Date.now() + dto.expires_in * minuteMs),
      },
      splits: splits.items,
      expire_topic: TOPICS.expireCheckout,
    });
    if (answer.outcome === 'REFUSED') {
      throw collectionRefusalError(answer.refusal, dto.service_code, requestError, (refusal) => this.splits.refusalError(refusal));
    }
    if (answer.outcome === 'CONFLICT') throw GatewayError.duplicate('merchant_transaction_id');
    return this.initiateResponse(answer);
  }

  async status(principal: GatewayPrincipal, merchantTransactionId: string) {
    const result = await checkoutResultOf(this.db, principal.clientId, merchantTransactionId);
    if (!result) throw GatewayError.notFound();
    return result;
  }

  /** The hosted page's view of a session; unknown references are a plain 404 for the page to explain. */
  async pageView(reference: string) {
    const session = await this.byReference(this.db.manager, reference);
    if (!session) throw new NotFoundException('This checkout does not exist');
    const payments = await this.payments.ofSession(this.db.manager, session.id);
    const paid = paidAmount(payments);
    const last = payments[payments.length - 1];
    return {
      session,
      state: {
        status: session.status,
        currency: session.currency,
        amount: wholeAmount(session.amount),
        paid: Number(paid.toFixed(0)),
        outstanding: Number(new Money(session.amount).minus(paid).toFixed(0)),
        expires_at: new Date(session.expires_at).toISOString(),
        expired: isExpired(session),
        last_payment_status: last?.payment_status ?? null,
        redirect_to: session.status === CHECKOUT_STATUS.PAID ? merchantRedirect(session) : null,
      },
    };
  }

  /**
   * POST /checkout/{reference}/pay: the payer pays the outstanding amount, or part of it, from a phone number.
   * One payment at a time per session; its result arrives from the operator like any charge's.
   */
  async pay(reference: string, { msisdn, amount: requested }: CheckoutPayDto) {
    const down = await this.health.refusal(this.rail.operator);
    if (down) throw new ServiceUnavailableException(down);
    return this.db.transaction(async (manager) => {
      // The page knows only the reference: a plain read finds its client, then the lock names it (on Citus a
      // locking read must stay in one client's shard).
      const found = await this.byReference(manager, reference);
      if (!found) throw new NotFoundException('This checkout does not exist');
      const [session]: CheckoutSessionRow[] = await manager.query(
        `${SELECT_CHECKOUT} WHERE cs.client_id = $1 AND cs.checkout_reference = $2 FOR UPDATE OF cs`,
        [found.client_id, reference],
      );
      if (isExpired(session)) throw new GoneException('This checkout has expired');
      if (session.status === CHECKOUT_STATUS.PROCESSING) throw new ConflictException('A payment is already being processed');
      if (!isOpen(session)) throw new ConflictException('This checkout can no longer be paid');

      const paid = paidAmount(await this.payments.ofSession(manager, session.id));
      const outstanding = new Money(session.amount).minus(paid);
      const amount = requested === undefined || requested === null ? outstanding : requestedWhole(requested);
      if (amount === null || amount.lte(0) || amount.gt(outstanding)) {
        throw new BadRequestException(`Amount must be a whole number from 1 to ${outstanding.toFixed(0)}`);
      }
      const { fee, refusal } = await merchantFee(manager, {
        clientId: session.client_id,
        serviceId: session.client_service_id,
        amount: amount.toFixed(),
        payerPaysCharge: false,
      });
      if (refusal) throw new BadRequestException(`Amount must be greater than the fee of ${formatAmount(refusal.fee)}`);
      const paymentId = await this.payments.insert(manager, {
        client_id: session.client_id,
        client_service_id: session.client_service_id,
        checkout_session_id: session.id,
        external_reference: session.merchant_transaction_id,
        request_fingerprint: `checkout:${randomUUID()}`,
        origin_channel_code: 'WEB',
        originator_msisdn: msisdn,
        payer_msisdn: msisdn,
        payer_name: session.payer_name,
        payer_email: session.payer_email,
        account_number: session.account_number,
        invoice_number: '',
        currency: session.currency,
        country_code: COUNTRY_OF_CURRENCY[session.currency] ?? 'KEN',
        service_amount: amount.toFixed(),
        transaction_charge: '0',
        merchant_fee: new Money(fee).toFixed(),
        add_transaction_charge: false,
        payment_method_code: 'MMONEY',
        extra_data: session.extra_data,
        description: session.narration,
        notify_client: false,
        notify_originator: false,
        callback_url: session.callback_url,
        next_step: null,
        // Shares are for the whole amount, so they ride on the payment that completes the session (the whole
        // amount at once, or the rest after part payments): confirming that payment distributes them.
        split_settlements: amount.eq(outstanding) ? (session.split_settlements as never) : null,
      });
      await this.sessions.startPayment(manager, session.client_id, session.id);
      // The payer confirms on the phone; the hosted page has no OTP step, so every number settles after the delay.
      await this.outcomes.scheduleSettlement(manager, session.client_id, paymentId, this.rail.settleDelayMs());
      return {
        status: CHECKOUT_STATUS.PROCESSING,
        payment_status: PAYMENT_STATUS.PENDING,
      };
    });
  }

  private initiateResponse(session: InitiatedCheckout) {
    return {
      merchant_transaction_id: session.merchant_transaction_id,
      checkout_reference: session.checkout_reference,
      currency: session.currency,
      amount: wholeAmount(session.amount),
      expires_at: new Date(session.expires_at).toISOString(),
      redirect_url: `${this.config.publicBaseUrl}/checkout/${session.checkout_reference}`,
    };
  }

  private async byReference(manager: EntityManager, reference: string): Promise<CheckoutSessionRow | null> {
    if (!/^CHK[0-9A-Z]{16}$/.test(reference)) return null;
    const [row] = await manager.query(`${SELECT_CHECKOUT} WHERE cs.checkout_reference = $1`, [reference]);
    return row ?? null;
  }
}

/** A part payment's amount: a JSON number or decimal string (contract §3) of whole major units; null when not one. */
function requestedWhole(value: unknown): Money | null {
  if (amountProblem(value) !== null) return null;
  const amount = new Money(value as number | string);
  return amount.isInteger() ? amount : null;
}

/** Unguessable: the reference is the only key to the payer's page. */
function newCheckoutReference(): string {
  const alphabet = '0123456789ABCDEFGHJKLMNPQRSTUVWXYZ';
  return `CHK${[...randomBytes(16)].map((b) => alphabet[b % alphabet.length]).join('')}`;
}

/** Where a paid payer goes: the merchant's redirect_url with our references in the query. */
function merchantRedirect(session: CheckoutSessionRow): string {
  const url = new URL(session.redirect_url);
  url.searchParams.set('merchant_transaction_id', session.merchant_transaction_id);
  url.searchParams.set('checkout_reference', session.checkout_reference);
  url.searchParams.set('status', String(session.status));
  return url.toString();
}
