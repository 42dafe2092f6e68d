import { ApiProperty } from '@nestjs/swagger';
import { Allow, IsEmail, IsInt, IsObject, IsOptional, IsString, Matches, Max, Min } from 'class-validator';
import { PAYER_MSISDN } from '../common/errors/gateway-error';
import { CompiledValidation } from '../common/http/compiled-validation';
import { FreeObjectProperty, MoneyProperty } from '../common/openapi/api-docs';
import { IsBoundedJson } from '../common/validation/json-size';
import { IsMsisdn, RequiredText } from '../common/validation/validators';

/** The longest session a merchant may open: one week of minutes. */
export const MAX_EXPIRES_IN_MINUTES = 10_080;

/** POST /v2/checkout/initiate (collection document §2, with its nine maximum lengths). */
@CompiledValidation()
export class CheckoutInitiateDto {
  @ApiProperty({ example: '2f0a7c3e-5d1b-4b8e-9a61-0d6c2f1e9b3a', maxLength: 64 }) @RequiredText(64) merchant_transaction_id: string;
  @ApiProperty({ example: 1500, description: 'integer, major units of the currency' })
  @IsInt()
  @Min(1)
  @Max(999_999_999_999_999)
  amount: number;
  @ApiProperty({ example: 'Jane Doe', maxLength: 100 }) @RequiredText(100) payer_name: string;
  @ApiProperty({ example: 'jane@example.com', maxLength: 100 }) @RequiredText(100) @IsEmail() payer_email: string;
  @ApiProperty({ example: '254712345678', maxLength: 25 }) @RequiredText(25) @IsMsisdn(PAYER_MSISDN) payer_msisdn: string;
  @ApiProperty({ example: 'CS1001', maxLength: 32 }) @RequiredText(32) service_code: string;
  @ApiProperty({ example: 'ACC-001', maxLength: 50 }) @RequiredText(50) account_number: string;
  @ApiProperty({ example: 30, description: 'session lifetime in minutes' })
  @IsInt()
  @Min(1)
  @Max(MAX_EXPIRES_IN_MINUTES)
  expires_in: number;
  @ApiProperty({ example: 'Order 42', maxLength: 255 }) @RequiredText(255) narration: string;
  @ApiProperty({ example: 'https://merchant.example.com/callbacks/payments', maxLength: 500 }) @RequiredText(500) callback_url: string;
  @ApiProperty({ example: 'https://merchant.example.com/orders/42', maxLength: 500 }) @RequiredText(500) redirect_url: string;
  @FreeObjectProperty({
    optional: true,
    description:
      'free JSON echoed in payment records; may carry split_settlements, e.g. ' +
      '`[{"account": "<partner wallet>", "amount": "100", "reason": "Partner commission"}]`',
    example: { order: 42 },
  })
  @IsOptional()
  @IsObject()
  @IsBoundedJson()
  extra_data?: Record<string, unknown>;
}

const PHONE = { message: 'Enter a phone number with its country code, digits only' };

/** POST /checkout/{reference}/pay, from the hosted page (or any payer's client). */
export class CheckoutPayDto {
  @ApiProperty({ example: '254712345678' }) @IsString(PHONE) @Matches(/^\+?\d{6,24}$/, PHONE) msisdn: string;
  /** Checked by the service: a whole number up to the amount still outstanding, which only the session knows. */
  @MoneyProperty('request', { example: 1500, optional: true, description: 'whole major units; the outstanding amount when absent' })
  @Allow()
  amount?: number | string;
}
