import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, Matches, MaxLength, registerDecorator, ValidateIf, ValidationOptions } from 'class-validator';
import { CompiledValidation } from '../common/http/compiled-validation';
import { IsCurrencyCode, IsMoneyAmount, LIMITS, RequiredText } from '../common/validation/validators';
import { MoneyProperty } from '../common/openapi/api-docs';
import type { PayoutErrorCode } from './payout-error';

/** The error_code a broken rule answers with (read by PayoutErrorFilter); rules without one answer VALIDATION_FAILED. */
const code = (payoutErrorCode: PayoutErrorCode): ValidationOptions => ({ context: { payoutErrorCode } });

const ACCOUNT_NUMBER_MAX = 64;
const URL_MAX = 500;

export const LOCAL_DESTINATIONS = ['MOBILE', 'BANK'] as const;
export const PARTY_TYPES = ['INDIVIDUAL', 'COMPANY'] as const;
export const B2B_RECIPIENT_TYPES = ['PAYBILL', 'TILL', 'BANK_ACCOUNT_NUMBER'] as const;
export const B2B_PAYMENT_METHODS = ['MMONEY_B2B', 'BANK'] as const;

/** E.164 digits (8 to 15, no leading zero) with an optional leading + (provider contract §10). */
export function IsPhoneNumber() {
  return Matches(/^\+?[1-9]\d{7,14}$/, {
    ...code('INVALID_PHONE_NUMBER'),
    message: '$property must be an E.164 phone number: 8 to 15 digits, optional leading +',
  });
}

/** An upper-case provider code such as MMONEY_KEN or BANK_KEN. */
function IsProviderCode() {
  return Matches(/^[A-Z][A-Z0-9_]{1,31}$/, { message: '$property must be an upper-case provider code such as MMONEY_KEN' });
}

const ALPHA3 = /^[A-Z]{3}$/;

/** An exchange rate: a positive decimal (JSON number or numeric string) with at most 10 decimals. */
function IsExchangeRate() {
  return function (target: object, propertyName: string) {
    registerDecorator({
      name: 'isExchangeRate',
      target: target.constructor,
      propertyName,
      validator: {
        validate: (value: unknown) => {
          const text = typeof value === 'number' && Number.isFinite(value) ? String(value) : value;
          return typeof text === 'string' && /^\d{1,15}(\.\d{1,10})?$/.test(text) && /[1-9]/.test(text);
        },
        defaultMessage: (args) => `${args?.property} must be a positive number with at most 10 decimal places`,
      },
    });
  };
}

/** recipient_bank_code: 2 to 11 letters or digits; required for BANK, may be empty or absent for MOBILE. */
function IsBankCodeFor(destinationField: string) {
  return function (target: object, propertyName: string) {
    registerDecorator({
      name: 'isBankCode',
      target: target.constructor,
      propertyName,
      validator: {
        validate: (value: unknown, args) => {
          const forBank = (args?.object as Record<string, unknown>)[destinationField] === 'BANK';
          if (!forBank && (value === undefined || value === null || value === '')) return true;
          return typeof value === 'string' && /^[A-Za-z0-9]{2,11}$/.test(value);
        },
        defaultMessage: (args) =>
          `${args?.property} must be 2 to 11 letters or digits` +
          ((args?.object as Record<string, unknown>)[destinationField] === 'BANK' ? ' (required for BANK)' : ''),
      },
    });
  };
}

/** POST /v1/payouts/initiate (disbursement document §2 "Local payout request"). */
@CompiledValidation()
export class LocalPayoutDto {
  @ApiProperty({ maxLength: LIMITS.reference }) @RequiredText(LIMITS.reference) payout_reference: string;
  @ApiProperty({ maxLength: LIMITS.code }) @RequiredText(LIMITS.code, code('SERVICE_NOT_ALLOWED')) service_code: string;
  @ApiProperty({ maxLength: LIMITS.name }) @RequiredText(LIMITS.name) recipient_first_name: string;
  @ApiProperty({ maxLength: LIMITS.name }) @RequiredText(LIMITS.name) recipient_last_name: string;
  @ApiProperty({ enum: LOCAL_DESTINATIONS })
  @IsIn(LOCAL_DESTINATIONS, { ...code('INVALID_DESTINATION_TYPE'), message: 'destination_type must be MOBILE or BANK' })
  destination_type: (typeof LOCAL_DESTINATIONS)[number];
  @ApiProperty({ example: 'MMONEY_KEN' }) @RequiredText(LIMITS.code) @IsProviderCode() destination_name: string;
  @ApiProperty({ example: '254712345678' })
  @RequiredText(LIMITS.msisdn, code('INVALID_PHONE_NUMBER'))
  @IsPhoneNumber()
  recipient_phone_number: string;
  @ApiProperty({ maxLength: ACCOUNT_NUMBER_MAX }) @RequiredText(ACCOUNT_NUMBER_MAX) recipient_account_number: string;
  @ApiPropertyOptional({ description: 'required for BANK (2 to 11 letters or digits); may be empty or absent for MOBILE' })
  @IsBankCodeFor('destination_type')
  recipient_bank_code?: string;
  @ApiProperty({ maxLength: LIMITS.name }) @RequiredText(LIMITS.name) recipient_account_name: string;
  @ApiProperty({ example: 'KES', description: "the float's currency" }) @IsCurrencyCode() source_currency: string;
  @ApiProperty({ example: 'KES' }) @IsCurrencyCode() destination_currency: string;
  @MoneyProperty('request', { example: '1' }) @IsExchangeRate() exchange_rate: string | number;
  @MoneyProperty('request', { example: '100.00', description: 'paid from the float (plus the service fee)' })
  @IsMoneyAmount()
  sender_amount: string | number;
  @ApiProperty({ example: 'KEN' })
  @Matches(ALPHA3, { message: 'sender_country_code must be three capital letters' })
  sender_country_code: string;
  @MoneyProperty('request', { example: '100.00' }) @IsMoneyAmount() recipient_amount: string | number;
  @ApiProperty({ maxLength: LIMITS.text }) @RequiredText(LIMITS.text) payment_description: string;
  @ApiProperty({ maxLength: URL_MAX }) @RequiredText(URL_MAX) callback_url: string;
}

/** POST /v1/payouts/imt/initiate: a local payout's fields plus the sender's and recipient's KYC (document §2). */
@CompiledValidation()
export class ImtPayoutDto extends LocalPayoutDto {
  @ApiProperty({ maxLength: LIMITS.name }) @RequiredText(LIMITS.name) sender_first_name: string;
  @ApiProperty({ maxLength: LIMITS.name }) @RequiredText(LIMITS.name) sender_last_name: string;
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(LIMITS.name) sender_middle_name?: string;
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(LIMITS.identificationNumber) sender_document_type?: string;
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(LIMITS.identificationNumber) sender_document_number?: string;
  @ApiPropertyOptional()
  @ValidateIf((o: ImtPayoutDto) => o.sender_phone_number !== undefined && o.sender_phone_number !== null && o.sender_phone_number !== '')
  @IsString(code('INVALID_PHONE_NUMBER'))
  @IsPhoneNumber()
  sender_phone_number?: string;
  @ApiProperty({ enum: PARTY_TYPES })
  @IsIn(PARTY_TYPES, { message: 'sender_type must be INDIVIDUAL or COMPANY' })
  sender_type: (typeof PARTY_TYPES)[number];
  @ApiProperty({ enum: PARTY_TYPES })
  @IsIn(PARTY_TYPES, { message: 'recipient_type must be INDIVIDUAL or COMPANY' })
  recipient_type: (typeof PARTY_TYPES)[number];
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(LIMITS.name) recipient_middle_name?: string;
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(LIMITS.identificationNumber) recipient_document_type?: string;
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(LIMITS.identificationNumber) recipient_document_number?: string;
  @ApiProperty({ maxLength: LIMITS.name }) @RequiredText(LIMITS.name) recipient_occupation: string;
  @ApiProperty({ maxLength: LIMITS.name }) @RequiredText(LIMITS.name) income_source: string;
  @ApiProperty({ maxLength: LIMITS.name }) @RequiredText(LIMITS.name) fund_purpose: string;
}

/** POST /v1/payouts/b2b/initiate (document §2 "B2B payout request"). */
@CompiledValidation()
export class B2bPayoutDto {
  @ApiProperty({ maxLength: LIMITS.reference }) @RequiredText(LIMITS.reference) payout_reference: string;
  @ApiProperty({ maxLength: LIMITS.code }) @RequiredText(LIMITS.code, code('SERVICE_NOT_ALLOWED')) service_code: string;
  @ApiProperty({ maxLength: LIMITS.reference }) @RequiredText(LIMITS.reference) payment_account_reference: string;
  @ApiProperty({ maxLength: LIMITS.name }) @RequiredText(LIMITS.name) recipient_name: string;
  @ApiProperty({ enum: B2B_RECIPIENT_TYPES })
  @IsIn(B2B_RECIPIENT_TYPES, {
    ...code('INVALID_DESTINATION_TYPE'),
    message: 'recipient_type must be PAYBILL, TILL or BANK_ACCOUNT_NUMBER',
  })
  recipient_type: (typeof B2B_RECIPIENT_TYPES)[number];
  @ApiProperty({ maxLength: ACCOUNT_NUMBER_MAX }) @RequiredText(ACCOUNT_NUMBER_MAX) recipient_account_number: string;
  @MoneyProperty('request', { example: '250.00' }) @IsMoneyAmount() amount: string | number;
  @ApiProperty({ maxLength: LIMITS.text }) @RequiredText(LIMITS.text) payment_description: string;
  @ApiProperty({ enum: B2B_PAYMENT_METHODS, description: 'MMONEY_B2B for PAYBILL and TILL, BANK for BANK_ACCOUNT_NUMBER' })
  @IsIn(B2B_PAYMENT_METHODS, { ...code('INVALID_PAYMENT_METHOD'), message: 'payment_method must be MMONEY_B2B or BANK' })
  payment_method: (typeof B2B_PAYMENT_METHODS)[number];
  @ApiProperty({ example: 'KES' }) @IsCurrencyCode() currency_code: string;
  @ApiProperty({ example: 'KEN' })
  @Matches(ALPHA3, { message: 'country_code must be an ISO 3166-1 alpha-3 code (three capital letters)' })
  country_code: string;
  @ApiProperty({ maxLength: URL_MAX }) @RequiredText(URL_MAX) callback_url: string;
}

/** The acknowledgement of an accepted payout, IMT or B2B request (response_code 720). */
export class PayoutAcknowledgement {
  @ApiProperty() payout_reference: string;
  @ApiProperty({ example: 720 }) response_code: number;
  @ApiProperty({ example: 'Accepted for processing' }) response_description: string;
}
