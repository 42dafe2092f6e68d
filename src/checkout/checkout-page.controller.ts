import { Body, Controller, Get, HttpCode, HttpException, Param, Post, Res, UseFilters } from '@nestjs/common';
import { ApiExcludeEndpoint, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { randomBytes } from 'node:crypto';
import { HostedPageErrorFilter, RETRY_AFTER_SECONDS } from '../common/errors/http-error.filter';
import { isDatabaseUnavailable } from '../common/errors/pg-errors';
import { ApiErrors, Doc } from '../common/openapi/api-docs';
import { HostedPageErrorBody } from '../common/openapi/error-bodies';
import { CHECKOUT_STATUS } from '../collections/checkout-session';
import { checkoutPage, explanationPage } from './checkout-page';
import { CheckoutPayDto } from './checkout.dto';
import { CheckoutPageState, CheckoutPaymentStarted } from './checkout.responses';
import { CheckoutService } from './checkout.service';

/**
 * The payer's side of hosted checkout, under /checkout: the page at the merchant's redirect_url, the state it
 * polls and the pay endpoint it posts to (usable without the page). The checkout reference is the credential.
 */
@ApiTags('hosted checkout page')
@Controller('checkout')
@UseFilters(HostedPageErrorFilter)
export class CheckoutPageController {
  constructor(private readonly checkout: CheckoutService) {}

  /** HTML for the payer's browser, not an API: left out of the OpenAPI document. */
  @Get(':reference')
  @ApiExcludeEndpoint()
  async page(@Param('reference') reference: string, @Res() reply: FastifyReply): Promise<void> {
    const nonce = randomBytes(16).toString('base64');
    const send = (status: number, html: string) =>
      reply
        .status(status)
        .header('content-type', 'text/html; charset=utf-8')
        .header('cache-control', 'no-store')
        .header('x-frame-options', 'DENY')
        .header(
          'content-security-policy',
          `default-src 'none'; style-src 'nonce-${nonce}'; script-src 'nonce-${nonce}'; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'`,
        )
        .send(html);
    const view = await this.checkout.pageView(reference).catch((error) => {
      if (error instanceof HttpException && error.getStatus() === 404) return null;
      // The payer's browser gets a page, not the JSON body of the filter.
      if (isDatabaseUnavailable(error)) return 'unavailable' as const;
      throw error;
    });
    if (view === 'unavailable') {
      void reply.header('retry-after', String(RETRY_AFTER_SECONDS));
      return void send(
        503,
        explanationPage(nonce, 'Temporarily unavailable', 'This checkout cannot be shown just now. Try again in a moment.'),
      );
    }
    if (!view) return void send(404, explanationPage(nonce, 'Checkout not found', 'There is no checkout at this address.'));
    const { session, state } = view;
    if (state.expired) return void send(410, explanationPage(nonce, 'Checkout expired', 'The time to pay this checkout has run out.'));
    if (state.status === CHECKOUT_STATUS.PAID && state.redirect_to) return void reply.redirect(state.redirect_to, 303);
    if (state.status === CHECKOUT_STATUS.REVERSED || state.status === CHECKOUT_STATUS.JAMMED) {
      return void send(409, explanationPage(nonce, 'Checkout closed', 'This checkout can no longer be paid.'));
    }
    send(200, checkoutPage(nonce, session, state));
  }

  @Get(':reference/state')
  @Doc('State of a checkout, for the hosted page', 'No token: the checkout reference is the credential.')
  @ApiOkResponse({ type: CheckoutPageState })
  @ApiErrors(HostedPageErrorBody, { 404: 'no checkout has this reference' })
  async state(@Param('reference') reference: string) {
    return (await this.checkout.pageView(reference)).state;
  }

  @Post(':reference/pay')
  @HttpCode(200)
  @Doc(
    "Pay a checkout from the payer's phone",
    'What the hosted page posts; the payer confirms on the phone. No token: the checkout reference is the credential.',
  )
  @ApiOkResponse({ type: CheckoutPaymentStarted })
  @ApiErrors(HostedPageErrorBody, 400, {
    404: 'no checkout has this reference',
    409: 'a payment is in progress, or the checkout is closed',
    410: 'the checkout has expired',
    503: 'the mobile-money rail is down; nothing is charged, the payer may try again later',
  })
  pay(@Param('reference') reference: string, @Body() body: CheckoutPayDto) {
    return this.checkout.pay(reference, body);
  }
}
