import { Body, Get, Param, Post } from '@nestjs/common';
import { CurrentGatewayClient, type GatewayPrincipal } from '../auth/gateway/gateway-principal';
import { GatewayController, GatewayOk } from '../auth/gateway/gateway-controller.decorator';
import { ChargeRequestDto, VerifyOtpDto } from './charge.dto';
import { ChargesService } from './charges.service';

@GatewayController('v1', 'mobile-money charge')
export class ChargesController {
  constructor(private readonly charges: ChargesService) {}

  @Post('mobile-money/charge')
  @GatewayOk()
  charge(@CurrentGatewayClient() client: GatewayPrincipal, @Body() body: ChargeRequestDto) {
    return this.charges.accept(client, body);
  }

  @Post('mobile-money/verify-otp')
  @GatewayOk()
  verifyOtp(@CurrentGatewayClient() client: GatewayPrincipal, @Body() body: VerifyOtpDto) {
    return this.charges.verifyOtp(client, body);
  }

  @Get('transaction/:chargeRequestId/status')
  status(@CurrentGatewayClient() client: GatewayPrincipal, @Param('chargeRequestId') chargeRequestId: string) {
    return this.charges.status(client, chargeRequestId);
  }
}
