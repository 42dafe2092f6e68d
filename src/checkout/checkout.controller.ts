import { Body, Get, Param, Post } from '@nestjs/common';
import { CurrentGatewayClient, type GatewayPrincipal } from '../auth/gateway/gateway-principal';
import { GatewayController, GatewayOk } from '../auth/gateway/gateway-controller.decorator';
import { CheckoutInitiateDto } from './checkout.dto';
import { CheckoutService } from './checkout.service';

@GatewayController('v2/checkout', 'hosted checkout')
export class CheckoutController {
  constructor(private readonly checkout: CheckoutService) {}

  @Post('initiate')
  @GatewayOk()
  initiate(@CurrentGatewayClient() client: GatewayPrincipal, @Body() body: CheckoutInitiateDto) {
    return this.checkout.initiate(client, body);
  }

  @Get('status/:merchantTransactionId')
  status(@CurrentGatewayClient() client: GatewayPrincipal, @Param('merchantTransactionId') merchantTransactionId: string) {
    return this.checkout.status(client, merchantTransactionId);
  }
}
