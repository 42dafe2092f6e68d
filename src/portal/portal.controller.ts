import { Body, Controller, Get, Inject, NotFoundException, Param, Post, Query, Res, UseFilters, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { ApiKeysService } from '../auth/gateway/api-keys.service';
import { isCallbackKind } from '../callbacks/settings/callback-settings.service';
import { CallbacksService } from '../callbacks/delivery/callbacks.service';
import { APP_CONFIG, type AppConfig } from '../infra/config/app-config';
import { csvStream } from './csv';
import { readAfter, readFilter } from './list-query';
import { PortalErrorFilter } from './portal-error.filter';
import { redirect, sendPage } from './portal-http';
import { CurrentPortalSession, PortalQuery, PortalSessionGuard } from './portal-session.guard';
import type { PortalSession } from './portal-sessions.service';
import type { EndpointForm } from './portal.service';
import { PortalService } from './portal.service';
import { PageFrame } from './views/html';
import {
  apiKeysPage,
  callbacksPage,
  DELIVERY_STATUS_NAMES,
  deliveriesPage,
  deliveryPage,
  overviewPage,
  PAYMENT_STATUS_NAMES,
  paymentsPage,
  PAYOUT_STATUS_NAMES,
  payoutsPage,
} from './views/pages';

type QueryParams = Record<string, unknown>;

const NOTICES: Record<string, string> = {
  revoked: 'The key is revoked: it gets no new tokens and its tokens are refused.',
  saved: 'Callback settings saved.',
  resent: 'Resend queued: the callback goes out again with the same X-Event-Id.',
};

function frame(session: PortalSession, title: string, active: string, notice?: unknown) {
  return (nonce: string): PageFrame & { user: NonNullable<PageFrame['user']> } => ({
    nonce,
    title,
    active,
    user: { username: session.username, clientName: session.clientName, csrfToken: session.csrfToken },
    notice: typeof notice === 'string' && NOTICES[notice] ? { kind: 'ok', text: NOTICES[notice] } : null,
  });
}

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
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Get()
  async overview(@CurrentPortalSession() session: PortalSession, @Res() reply: FastifyReply): Promise<void> {
    const view = await this.portal.overview(session.clientId);
    sendPage(reply, 200, (nonce) => overviewPage(frame(session, 'Overview', '/portal')(nonce), view));
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
    const filter = readFilter(query, PAYMENT_STATUS_NAMES);
    const page = await this.portal.paymentsPage(session.clientId, filter, readAfter(query));
    const options = {
      path: '/portal/payments',
      filter,
      statuses: PAYMENT_STATUS_NAMES,
      next: page.next,
      referenceLabel: 'External reference',
      csv: true,
    };
    sendPage(reply, 200, (nonce) => paymentsPage(frame(session, 'Payments', '/portal/payments')(nonce), page.rows, options));
  }

  @Get('payments.csv')
  paymentsCsv(@CurrentPortalSession() session: PortalSession, @PortalQuery() query: QueryParams, @Res() reply: FastifyReply): void {
    const rows = this.portal.paymentsExport(session.clientId, readFilter(query, PAYMENT_STATUS_NAMES));
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
          p.id,
          p.created_at,
          p.external_reference,
          p.payer_msisdn,
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

  @Get('payouts')
  async payouts(
    @CurrentPortalSession() session: PortalSession,
    @PortalQuery() query: QueryParams,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const filter = readFilter(query, PAYOUT_STATUS_NAMES);
    const page = await this.portal.payoutsPage(session.clientId, filter, readAfter(query));
    const options = {
      path: '/portal/payouts',
      filter,
      statuses: PAYOUT_STATUS_NAMES,
      next: page.next,
      referenceLabel: 'Payout reference',
      csv: true,
    };
    sendPage(reply, 200, (nonce) => payoutsPage(frame(session, 'Payouts', '/portal/payouts')(nonce), page.rows, options));
  }

  @Get('payouts.csv')
  payoutsCsv(@CurrentPortalSession() session: PortalSession, @PortalQuery() query: QueryParams, @Res() reply: FastifyReply): void {
    const rows = this.portal.payoutsExport(session.clientId, readFilter(query, PAYOUT_STATUS_NAMES));
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
          p.id,
          p.created_at,
          p.payout_reference,
          p.kind,
          p.destination_type,
          p.recipient_account_number,
          p.currency,
          p.amount,
          p.fee,
          p.status,
          p.result_description,
        ],
      ),
    );
  }

  @Get('deliveries')
  async deliveries(
    @CurrentPortalSession() session: PortalSession,
    @PortalQuery() query: QueryParams,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const filter = readFilter(query, DELIVERY_STATUS_NAMES);
    const page = await this.portal.deliveriesPage(session.clientId, filter, readAfter(query));
    const options = { path: '/portal/deliveries', filter, statuses: DELIVERY_STATUS_NAMES, next: page.next, referenceLabel: 'Reference' };
    sendPage(reply, 200, (nonce) =>
      deliveriesPage(frame(session, 'Callback deliveries', '/portal/deliveries', query.notice)(nonce), page.rows, options),
    );
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

  /** The replay API's own method: same event id and body, to the stored URL, newly signed. */
  @Post('deliveries/:id/resend')
  async resend(@CurrentPortalSession() session: PortalSession, @Param('id') id: string, @Res() reply: FastifyReply): Promise<void> {
    if (!(await this.callbacks.replay(session.clientId, id))) throw new NotFoundException();
    redirect(reply, `/portal/deliveries/${id}?notice=resent`);
  }
}
