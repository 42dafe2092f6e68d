import { Body, Get, Param, Post } from '@nestjs/common';
import { ApiOkResponse } from '@nestjs/swagger';
import { CurrentGatewayClient, type GatewayPrincipal } from '../auth/gateway/gateway-principal';
import { GatewayController, GatewayOk } from '../auth/gateway/gateway-controller.decorator';
import { Doc, GatewayErrors } from '../common/openapi/api-docs';
import { PaymentResult } from '../collections/payment.responses';
import { ChargeRequestDto, VerifyOtpDto } from './charge.dto';
import { ChargeAccepted, OtpVerification } from './charge.responses';
import { ChargesService } from './charges.service';

@GatewayController('v1', 'mobile-money charge')
export class ChargesController {
  constructor(private readonly charges: ChargesService) {}

  @Post('mobile-money/charge')
  @GatewayOk()
  @Doc(
    'Charge a mobile-money payer',
    'Prompts the payer; the result follows by callback and status query. Replaying an external_reference answers the original charge.',
  )
  @ApiOkResponse({ type: ChargeAccepted })
  @GatewayErrors({
    400: 'invalid request (172), missing (109) or invalid (110) payer msisdn, invalid currency (115); nothing is charged',
    409: 'external_reference was used for a different request',
    503: 'generic failure (174): the mobile-money rail is down; nothing is stored',
  })
  charge(@CurrentGatewayClient() client: GatewayPrincipal, @Body() body: ChargeRequestDto) {
    return this.charges.accept(client, body);
  }

  @Post('mobile-money/verify-otp')
  @GatewayOk()
  @Doc('Verify the OTP of a charge', 'For charges answered with next_step VERIFY_OTP; three wrong codes fail the payment.')
  @ApiOkResponse({ type: OtpVerification })
  @GatewayErrors({ 400: 'reference and otp are required, or the charge takes no OTP', 404: 'no charge of the caller has this reference' })
  verifyOtp(@CurrentGatewayClient() client: GatewayPrincipal, @Body() body: VerifyOtpDto) {
    return this.charges.verifyOtp(client, body);
  }

  @Get('transaction/:chargeRequestId/status')
  @Doc('Payment result of a charge', 'The charge callback shape; check it before fulfilling.')
  @ApiOkResponse({ type: PaymentResult })
  @GatewayErrors({ 404: 'no charge of the caller has this id (120)' })
  status(@CurrentGatewayClient() client: GatewayPrincipal, @Param('chargeRequestId') chargeRequestId: string) {
    return this.charges.status(client, chargeRequestId);
  }
}
