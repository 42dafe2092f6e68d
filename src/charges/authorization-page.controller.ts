import { Controller, Get, Header, Param, UseFilters } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { HostedPageErrorFilter } from '../common/errors/http-error.filter';

/**
 * The `payment_url` of an AUTHORIZE_TRANSACTION charge. Real operators show their own authorisation page; the
 * sandbox operator authorises by itself after SANDBOX_SETTLE_DELAY_MS, so this page only says so. It looks
 * nothing up, so it reveals nothing about the reference in its address.
 */
@ApiExcludeController()
@Controller('checkout/authorize')
@UseFilters(HostedPageErrorFilter)
export class AuthorizationPageController {
  @Get(':chargeRequestId')
  @Header('content-type', 'text/html; charset=utf-8')
  @Header('cache-control', 'no-store')
  page(@Param('chargeRequestId') _chargeRequestId: string): string {
    return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Authorise payment</title>
<style>body{font-family:system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem;color:#111;line-height:1.5}</style></head>
<body><main><h1>Authorise your payment</h1>
<p>In the sandbox the mobile-money operator authorises this payment by itself. You can close this page; the
merchant receives the result by callback.</p></main></body></html>`;
  }
}
