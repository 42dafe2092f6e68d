import { Body, Get, Param, Post } from '@nestjs/common';
import { ApiOkResponse } from '@nestjs/swagger';
import { CurrentGatewayClient, type GatewayPrincipal } from '../auth/gateway/gateway-principal';
import { GatewayController, GatewayOk } from '../auth/gateway/gateway-controller.decorator';
import { Doc, GatewayErrors } from '../common/openapi/api-docs';
import { CheckoutInitiateDto } from './checkout.dto';
import { CheckoutInitiated, CheckoutResult } from './checkout.responses';
import { CheckoutService } from './checkout.service';

@GatewayController('v2/checkout', 'hosted checkout')
export class CheckoutController {
  constructor(private readonly checkout: CheckoutService) {}

  @Post('initiate')
  @GatewayOk()
  @Doc(
    'Start a hosted checkout',
    'Send the payer to redirect_url; the result follows by callback to callback_url. Idempotent on merchant_transaction_id.',
  )
  @ApiOkResponse({ type: CheckoutInitiated })
  @GatewayErrors({
    400: 'invalid request or service code (172); nothing is stored',
    409: 'merchant_transaction_id was used for a different request',
    503: 'generic failure (174): the mobile-money rail is down; nothing is stored',
  })
  initiate(@CurrentGatewayClient() client: GatewayPrincipal, @Body() body: CheckoutInitiateDto) {
    return this.checkout.initiate(client, body);
  }

  @Get('status/:merchantTransactionId')
  @Doc('Status of a hosted checkout', 'The checkout callback shape; fetch it before fulfilling.')
  @ApiOkResponse({ type: CheckoutResult })
  @GatewayErrors({ 404: 'no checkout of the caller has this merchant_transaction_id (120)' })
  status(@CurrentGatewayClient() client: GatewayPrincipal, @Param('merchantTransactionId') merchantTransactionId: string) {
    return this.checkout.status(client, merchantTransactionId);
  }
}
