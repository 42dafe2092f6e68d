import { MoneyProperty } from '../common/openapi/api-docs';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

/** Charge response (collection document §2 "Mobile-money charge request"). */
export class ChargeAccepted {
  @ApiProperty({ example: 176 }) status_code: number;
  @ApiProperty({ example: 'Charge posted successfully' }) status_description: string;
  @MoneyProperty('answer', { example: '101.5000', description: 'service amount plus the payer-paid charge' }) total_amount: string;
  @MoneyProperty('answer', { example: '100.0000' }) service_amount: string;
  @MoneyProperty('answer', { example: '1.5000' }) transaction_charge: string;
  @ApiProperty({ example: 1042 }) charge_request_id: number;
  @ApiProperty({ example: 'ORDER-42' }) external_reference: string;
  @ApiProperty({ type: String, nullable: true, description: 'for operators that authorise on a page of their own' }) payment_url:
    string | null;
  @ApiProperty({ enum: ['VERIFY_OTP', 'AUTHORIZE_TRANSACTION'], nullable: true, example: 'VERIFY_OTP' }) next_step: string | null;
}

/** OTP verification response (collection document §2 "OTP verification"). */
export class OtpVerification {
  @ApiProperty({ example: 'ORDER-42', description: 'the external_reference of the charge' }) reference: string;
  @ApiProperty({ enum: ['SUCCESSFUL', 'OTP_INVALID', 'FAILED'], example: 'SUCCESSFUL' }) status: string;
  @ApiProperty({ example: 'OTP verified; the result will be sent to the callback URL' }) description: string;
  @ApiPropertyOptional({ example: 2, description: 'with OTP_INVALID' }) attempts_remaining?: number;
}
