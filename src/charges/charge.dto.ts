import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsEmail, IsIn, IsNotEmpty, IsObject, IsOptional, IsString, Matches, MaxLength } from 'class-validator';
import { CompiledValidation } from '../common/http/compiled-validation';
import { FreeObjectProperty, MoneyProperty } from '../common/openapi/api-docs';
import { GATEWAY_CODES, GATEWAY_CONTEXT, PAYER_MSISDN } from '../common/errors/gateway-error';
import { IsBoundedJson } from '../common/validation/json-size';
import { IsCurrencyCode, IsMoneyAmount, IsMsisdn, IsNonNegativeMoney, LIMITS, RequiredText } from '../common/validation/validators';

export const ORIGIN_CHANNELS = ['API', 'WEB', 'USSD', 'APP'] as const;

/** POST /v1/mobile-money/charge (collection document §2). */
@CompiledValidation()
export class ChargeRequestDto {
  @ApiProperty({ example: 'ORDER-42' }) @RequiredText(LIMITS.reference) external_reference: string;
  @ApiProperty({ example: 'DEMO' }) @RequiredText(LIMITS.code) client_code: string;
  @ApiProperty({ example: 'API', enum: ORIGIN_CHANNELS }) @IsIn(ORIGIN_CHANNELS) origin_channel_code: (typeof ORIGIN_CHANNELS)[number];
  @ApiProperty({ example: '254712345678' }) @IsMsisdn() originator_msisdn: string;
  @ApiProperty({ example: '254712345678' }) @IsMsisdn(PAYER_MSISDN) payer_msisdn: string;
  @ApiPropertyOptional({ example: 'Jane Doe' }) @IsOptional() @IsString() @MaxLength(LIMITS.name) payer_name?: string;
  @ApiProperty({ example: 'jane@example.com' }) @RequiredText(LIMITS.email) @IsEmail() payer_email: string;
  @ApiProperty({ example: 'CS1001' }) @RequiredText(LIMITS.code) service_code: string;
  @ApiProperty({ example: 'ACC-001' }) @RequiredText(50) account_number: string;
  @ApiProperty({ example: 'INV-42', description: 'may be empty' }) @IsString() @MaxLength(50) invoice_number: string;
  @ApiProperty({ example: 'KES' }) @IsCurrencyCode({ context: GATEWAY_CONTEXT.invalidCurrency }) currency_code: string;
  @ApiProperty({ example: 'KEN' })
  @IsString()
  @Matches(/^[A-Z]{3}$/, { message: 'country_code must be three capital letters' })
  country_code: string;
  @MoneyProperty('request', { example: '100.00' }) @IsMoneyAmount() amount: string | number;
  @ApiProperty({ example: false }) @IsBoolean() add_transaction_charge: boolean;
  @MoneyProperty('request', { example: '0' }) @IsNonNegativeMoney() transaction_charge: string | number;
  @ApiProperty({ example: 'MMONEY_KEN' }) @RequiredText(LIMITS.code) payment_method_code: string;
  @FreeObjectProperty({ example: { order: 42 } }) @IsObject() @IsBoundedJson() extra_data: Record<string, unknown>;
  @ApiProperty({ example: 'Order 42' }) @RequiredText(LIMITS.text) description: string;
  @ApiProperty({ example: true }) @IsBoolean() notify_client: boolean;
  @ApiProperty({ example: false }) @IsBoolean() notify_originator: boolean;
  @ApiProperty({ example: 'https://merchant.example.com/callbacks/payments' }) @RequiredText(500) callback_url: string;
  @ApiPropertyOptional({ example: '123456' }) @IsOptional() @IsString() @MaxLength(16) otp_code?: string;
}

/** The document answers any missing or malformed field of the OTP check with one fixed 172 body. */
const OTP_REQUIRED = {
  message: 'Both reference and otp are required',
  context: { gateway: { code: GATEWAY_CODES.VALIDATION, description: 'Both reference and otp are required' } },
};

/** POST /v1/mobile-money/verify-otp (collection document §3). */
export class VerifyOtpDto {
  @ApiProperty({ example: 'ORDER-42', description: 'the charge external_reference' })
  @IsString(OTP_REQUIRED)
  @IsNotEmpty(OTP_REQUIRED)
  @MaxLength(LIMITS.reference, OTP_REQUIRED)
  reference: string;
  /** Bounded like otp_code: a longer one is no OTP and must not count as an attempt. */
  @ApiProperty({ example: '123456', maxLength: 16 })
  @IsString(OTP_REQUIRED)
  @IsNotEmpty(OTP_REQUIRED)
  @MaxLength(16, OTP_REQUIRED)
  otp: string;
}
