import {
  BadRequestException,
  Body,
  Controller,
  Get,
  NotFoundException,
  Param,
  Post,
  Query,
  Res,
  UseFilters,
  UseGuards,
} from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { ApiKeysService } from '../auth/gateway/api-keys.service';
import { isCallbackKind } from '../clients/callback-settings.service';
import { CallbacksService } from '../callbacks/delivery/callbacks.service';
import { FloatAlertsService } from '../float/float-alerts.service';
import { StatementQueryDto } from '../statements/statement-query.dto';
import { ReconciliationRepository } from '../reconciliation/reconciliation.repository';
import { StatementsService } from '../statements/statements.service';
import { csvStream, textCell } from '../common/csv';
import { readCursor, readFilter } from './list-query';
import { PortalErrorFilter } from './portal-error.filter';
import { redirect, sendPage } from './portal-http';
import { CurrentPortalSession, PortalQuery, PortalSessionGuard } from './portal-session.guard';
import type { PortalSession } from './portal-sessions.service';
import { frame, TIME_ZONES } from './portal-frame';
import type { EndpointForm } from './portal.service';
import { OVERVIEW_PERIODS, PortalService } from './portal.service';
import {
  apiKeysPage,
  callbacksPage,
  DELIVERY_STATUS_NAMES,
  deliveriesPage,
  deliveryPage,
  differencePage,
  overviewPage,
  PAYMENT_STATUS_NAMES,
  paymentPage,
  paymentsPage,
  PAYOUT_STATUS_NAMES,
  payoutPage,
  payoutsPage,
  reconciliationPage,
  statementsPage,
} from './views/pages';

type QueryParams = Record<string, unknown>;

/** The latest differences the reconciliation page lists. */
const DIFFERENCES_SHOWN = 200;

const SEARCH_LABEL = 'Reference (its start), phone number or exact amount';

function sendCsv(reply: FastifyReply, name: string, body: NodeJS.ReadableStream): void {
  void reply
    .header('content-type', 'text/csv; charset=utf-8')
    .header('content-disposition', `attachment; filename="${name}-${new Date().toISOString().slice(0, 10)}.csv"`)
    .header('cache-control', 'no-store')
    .header('x-content-type-options', 'nosniff')
    .send(body);
}

/** The merchant portal's pages, for the signed-in user's client only (every read and change is scoped by it). */
@ApiExcludeController()
@Controller('portal')
@UseGuards(PortalSessionGuard)
@UseFilters(PortalErrorFilter)
export class PortalController {
  constructor(
    private readonly portal: PortalService,
    private readonly apiKeys: ApiKeysService,
    private readonly callbacks: CallbacksService,
    private readonly statements: StatementsService,
    private readonly floatAlerts: FloatAlertsService,
    private readonly reconciliationRows: ReconciliationRepository,
  ) {}

  @Get()
  async overview(
    @CurrentPortalSession() session: PortalSession,
    @Query('days') days: unknown,
    @Query('notice') notice: unknown,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const period = days === undefined ? OVERVIEW_PERIODS[0] : OVERVIEW_PERIODS.find((p) => String(p) === days);
    if (period === undefined) throw new BadRequestException(`The period is one of ${OVERVIEW_PERIODS.join(' or ')} days`);
    const view = await this.portal.overview(session.clientId, session.timeZone, period);
    sendPage(reply, 200, (nonce) => overviewPage(frame(session, 'Overview', '/portal', notice)(nonce), { ...view, timeZones: TIME_ZONES }));
  }

  @Post('time-zone')
  async setTimeZone(
    @CurrentPortalSession() session: PortalSession,
    @Body() form: { time_zone?: unknown } | undefined,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const zone = form?.time_zone;
    if (typeof zone !== 'string' || !TIME_ZONES.includes(zone) || !(await this.portal.setTimeZone(session.clientId, zone)))
      throw new BadRequestException('Choose a time zone from the list.');
    redirect(reply, '/portal?notice=time-zone');
  }

  @Post('float-alerts/:account')
  async saveFloatAlert(
    @CurrentPortalSession() session: PortalSession,
    @Param('account') account: string,
    @Body() form: { threshold?: unknown; sms?: unknown } | undefined,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    await this.floatAlerts.set(session.clientId, account, { threshold: form?.threshold, contact: form?.sms });
    redirect(reply, '/portal?notice=alert-saved');
  }

  @Post('float-alerts/:account/clear')
  async clearFloatAlert(
    @CurrentPortalSession() session: PortalSession,
    @Param('account') account: string,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    if (!(await this.floatAlerts.clear(session.clientId, account))) throw new NotFoundException();
    redirect(reply, '/portal?notice=alert-cleared');
  }

  @Get('api-keys')
  async apiKeysList(
    @CurrentPortalSession() session: PortalSession,
    @Query('notice') notice: unknown,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const keys = await this.apiKeys.list(session.clientId);
    sendPage(reply, 200, (nonce) => apiKeysPage(frame(session, 'API keys', '/portal/api-keys', notice)(nonce), keys));
  }

  /** Answers with the page itself (not a redirect), so the secret is shown once and lands in no URL or history. */
  @Post('api-keys')
  async createApiKey(@CurrentPortalSession() session: PortalSession, @Res() reply: FastifyReply): Promise<void> {
    const created = await this.apiKeys.issue(session.clientId);
    const keys = await this.apiKeys.list(session.clientId);
    sendPage(reply, 201, (nonce) => apiKeysPage(frame(session, 'API keys', '/portal/api-keys')(nonce), keys, created));
  }

  @Post('api-keys/:key/revoke')
  async revokeApiKey(@CurrentPortalSession() session: PortalSession, @Param('key') key: string, @Res() reply: FastifyReply): Promise<void> {
    if (!(await this.apiKeys.revoke(session.clientId, key))) throw new NotFoundException();
    redirect(reply, '/portal/api-keys?notice=revoked');
  }

  @Get('callbacks')
  async callbackSettings(
    @CurrentPortalSession() session: PortalSession,
    @Query('notice') notice: unknown,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const view = await this.portal.callbackSettingsView(session.clientId);
    sendPage(reply, 200, (nonce) => callbacksPage(frame(session, 'Callbacks', '/portal/callbacks', notice)(nonce), view));
  }

  @Post('callbacks/signing-secret/rotate')
  async rotateSigningSecret(@CurrentPortalSession() session: PortalSession, @Res() reply: FastifyReply): Promise<void> {
    const newSecret = await this.portal.rotateSigningSecret(session.clientId);
    const view = await this.portal.callbackSettingsView(session.clientId);
    sendPage(reply, 200, (nonce) => callbacksPage(frame(session, 'Callbacks', '/portal/callbacks')(nonce), { ...view, newSecret }));
  }

  @Post('callbacks/:kind')
  async saveCallbackEndpoint(
    @CurrentPortalSession() session: PortalSession,
    @Param('kind') kind: string,
    @Body() form: EndpointForm,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    if (!isCallbackKind(kind)) throw new NotFoundException();
    await this.portal.saveEndpoint(session.clientId, kind, form ?? {});
    redirect(reply, '/portal/callbacks?notice=saved');
  }

  @Get('payments')
  async payments(
    @CurrentPortalSession() session: PortalSession,
    @PortalQuery() query: QueryParams,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const filter = readFilter(query, PAYMENT_STATUS_NAMES, session.timeZone);
    const page = await this.portal.paymentsPage(session.clientId, filter, readCursor(query));
    const options = { path: '/portal/payments', filter, statuses: PAYMENT_STATUS_NAMES, searchLabel: SEARCH_LABEL, csv: true };
    sendPage(reply, 200, (nonce) => paymentsPage(frame(session, 'Payments', '/portal/payments')(nonce), page, options));
  }

  @Get('payments.csv')
  paymentsCsv(@CurrentPortalSession() session: PortalSession, @PortalQuery() query: QueryParams, @Res() reply: FastifyReply): void {
    const rows = this.portal.paymentsExport(session.clientId, readFilter(query, PAYMENT_STATUS_NAMES, session.timeZone));
    sendCsv(
      reply,
      'payments',
      csvStream(
        [
          'payment_id',
          'created_at',
          'external_reference',
          'payer_msisdn',
          'currency',
          'amount',
          'fee',
          'payment_status',
          'description',
          'settled_at',
        ],
        rows,
        (p) => [
          textCell(p.id),
          p.created_at,
          textCell(p.external_reference),
          textCell(p.payer_msisdn),
          p.currency,
          p.amount,
          p.fee,
          p.status,
          p.description,
          p.settled_at,
        ],
      ),
    );
  }

  @Get('payments/:id')
  async payment(@CurrentPortalSession() session: PortalSession, @Param('id') id: string, @Res() reply: FastifyReply): Promise<void> {
    const payment = await this.portal.payment(session.clientId, id);
    if (!payment) throw new NotFoundException();
    sendPage(reply, 200, (nonce) => paymentPage(frame(session, 'Payment', '/portal/payments')(nonce), payment));
  }

  @Get('payouts')
  async payouts(
    @CurrentPortalSession() session: PortalSession,
    @PortalQuery() query: QueryParams,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const filter = readFilter(query, PAYOUT_STATUS_NAMES, session.timeZone);
    const page = await this.portal.payoutsPage(session.clientId, filter, readCursor(query));
    const options = { path: '/portal/payouts', filter, statuses: PAYOUT_STATUS_NAMES, searchLabel: SEARCH_LABEL, csv: true };
    sendPage(reply, 200, (nonce) => payoutsPage(frame(session, 'Payouts', '/portal/payouts')(nonce), page, options));
  }

  @Get('payouts.csv')
  payoutsCsv(@CurrentPortalSession() session: PortalSession, @PortalQuery() query: QueryParams, @Res() reply: FastifyReply): void {
    const rows = this.portal.payoutsExport(session.clientId, readFilter(query, PAYOUT_STATUS_NAMES, session.timeZone));
    sendCsv(
      reply,
      'payouts',
      csvStream(
        [
          'payout_id',
          'created_at',
          'payout_reference',
          'kind',
          'destination_type',
          'recipient_account_number',
          'currency',
          'amount',
          'fee',
          'status',
          'result_description',
        ],
        rows,
        (p) => [
          textCell(p.id),
          p.created_at,
          textCell(p.payout_reference),
          p.kind,
          p.destination_type,
          textCell(p.recipient_account_number),
          p.currency,
          p.amount,
          p.fee,
          p.status,
          p.result_description,
        ],
      ),
    );
  }

  @Get('payouts/:id')
  async payout(@CurrentPortalSession() session: PortalSession, @Param('id') id: string, @Res() reply: FastifyReply): Promise<void> {
    const payout = await this.portal.payout(session.clientId, id);
    if (!payout) throw new NotFoundException();
    sendPage(reply, 200, (nonce) => payoutPage(frame(session, 'Payout', '/portal/payouts')(nonce), payout));
  }

  @Get('deliveries')
  async deliveries(
    @CurrentPortalSession() session: PortalSession,
    @PortalQuery() query: QueryParams,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const filter = readFilter(query, DELIVERY_STATUS_NAMES, session.timeZone);
    const page = await this.portal.deliveriesPage(session.clientId, filter, readCursor(query));
    const options = { path: '/portal/deliveries', filter, statuses: DELIVERY_STATUS_NAMES, searchLabel: 'Reference (its start)' };
    sendPage(reply, 200, (nonce) => deliveriesPage(frame(session, 'Callback deliveries', '/portal/deliveries')(nonce), page, options));
  }

  @Get('deliveries/:id')
  async delivery(
    @CurrentPortalSession() session: PortalSession,
    @Param('id') id: string,
    @Query('notice') notice: unknown,
    @Res() reply: FastifyReply,
  ) {
    const delivery = await this.callbacks.delivery(session.clientId, id);
    if (!delivery) throw new NotFoundException();
    sendPage(reply, 200, (nonce) => deliveryPage(frame(session, 'Callback delivery', '/portal/deliveries', notice)(nonce), delivery));
  }

  @Get('statements')
  async statementForm(@CurrentPortalSession() session: PortalSession, @Res() reply: FastifyReply): Promise<void> {
    const accounts = await this.portal.statementAccounts(session.clientId);
    sendPage(reply, 200, (nonce) => statementsPage(frame(session, 'Statements', '/portal/statements')(nonce), accounts));
  }

  /** The wallet service's statement (XLSX or PDF) of one of the client's wallets; a bad period or wallet is a page. */
  @Get('statements/download')
  async statement(@CurrentPortalSession() session: PortalSession, @Query() query: StatementQueryDto, @Res() reply: FastifyReply) {
    const statement = await this.statements.open(session.clientId, query);
    return this.statements.send(reply, statement, query.doc_type);
  }

  /** The replay API's own method: same event id and body, to the stored URL, newly signed. */
  @Post('deliveries/:id/resend')
  async resend(@CurrentPortalSession() session: PortalSession, @Param('id') id: string, @Res() reply: FastifyReply): Promise<void> {
    if (!(await this.callbacks.replay(session.clientId, id))) throw new NotFoundException();
    redirect(reply, `/portal/deliveries/${id}?notice=resent`);
  }

  /** Any other address under /portal: the portal's own 404 page, with its navigation. */
  @Get('reconciliation')
  async reconciliation(@CurrentPortalSession() session: PortalSession, @Res() reply: FastifyReply): Promise<void> {
    const differences = await this.reconciliationRows.differencesOf(session.clientId, DIFFERENCES_SHOWN);
    sendPage(reply, 200, (nonce) => reconciliationPage(frame(session, 'Reconciliation', '/portal/reconciliation')(nonce), differences));
  }

  @Get('reconciliation/:id')
  async difference(@CurrentPortalSession() session: PortalSession, @Param('id') id: string, @Res() reply: FastifyReply): Promise<void> {
    const difference = /^\d{1,18}$/.test(id) ? await this.reconciliationRows.differenceOf(session.clientId, id) : null;
    if (!difference) throw new NotFoundException();
    sendPage(reply, 200, (nonce) => differencePage(frame(session, 'Difference', '/portal/reconciliation')(nonce), difference));
  }

  @Get('*')
  unknown(): never {
    throw new NotFoundException();
  }
}
