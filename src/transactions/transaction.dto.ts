import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsISO8601, IsObject, IsOptional, IsString, Matches, MaxLength } from 'class-validator';
import { CURRENCIES } from '../common/currencies';
import { CompiledValidation } from '../common/http/compiled-validation';
import { IsBoundedJson } from '../common/validation/json-size';
import { FreeObjectProperty, MoneyProperty } from '../common/openapi/api-docs';
import { IsCurrencyCode, IsMoneyAmount, LIMITS, RequiredText } from '../common/validation/validators';

class MoneyRequestDto {
  @ApiProperty({ example: 'DEMO' })
  @RequiredText(LIMITS.code)
  client_code: string;
  @ApiProperty({ example: 'CS1001' })
  @RequiredText(LIMITS.code)
  client_service_code: string;
  @MoneyProperty('request', { example: 100 }) @IsMoneyAmount() transaction_amount: number | string;
  @ApiProperty({ example: 'KES', enum: CURRENCIES })
  @IsCurrencyCode()
  currency: string;
  @ApiProperty({ example: 'INV-2024-0001' })
  @RequiredText(LIMITS.reference)
  source_transaction_id: string;
  @FreeObjectProperty({ example: { order: 42 }, optional: true })
  @IsOptional()
  @IsObject()
  @IsBoundedJson()
  source_transaction_data?: Record<string, unknown>;
  @ApiPropertyOptional({ example: 'Top-up from M-Pesa' })
  @IsOptional()
  @IsString()
  @MaxLength(LIMITS.text)
  transaction_narration?: string;
  @ApiPropertyOptional({ example: '2024-03-01T10:15:00Z' })
  @IsOptional()
  @IsISO8601({ strict: true })
  // ISO 8601 also has week (2009-W01-1) and ordinal (2009-123) dates, which JavaScript cannot read: calendar dates only.
  @Matches(/^\d{4}-\d{2}-\d{2}(T|$)/, {
    message: 'transaction_date must be a calendar date or date-time (YYYY-MM-DD…)',
  })
  transaction_date?: string;
}

@CompiledValidation()
export class CreditDebitDto extends MoneyRequestDto {
  @ApiProperty({ example: '10000100001' })
  @RequiredText(LIMITS.code)
  account_number: string;
}

@CompiledValidation()
export class TransferDto extends MoneyRequestDto {
  @ApiProperty({ example: '10000100001' })
  @RequiredText(LIMITS.code)
  source_account_number: string;
  @ApiProperty({ example: '1000000002' })
  @RequiredText(LIMITS.code)
  destination_account_number: string;
  @ApiProperty({ example: 'INTERNAL' })
  @RequiredText(LIMITS.code)
  transaction_source: string;
}

export class ReversalDto {
  @ApiPropertyOptional({ example: 'REV-INV-2024-0001' })
  @IsOptional()
  @RequiredText(LIMITS.reference)
  source_transaction_id?: string;
  @ApiPropertyOptional({ example: 'Reversal of INV-2024-0001' })
  @IsOptional()
  @IsString()
  @MaxLength(LIMITS.text)
  transaction_narration?: string;
}

export const MONEY_COMMANDS = ['CREDIT', 'DEBIT'] as const;
export type MoneyCommand = (typeof MONEY_COMMANDS)[number];

@CompiledValidation()
export class MoneyCommandQuery {
  @ApiProperty({ enum: MONEY_COMMANDS })
  @IsIn(MONEY_COMMANDS)
  command: MoneyCommand;
}

export class ReverseCommandQuery {
  @ApiProperty({ enum: ['REVERSE'] }) @IsIn(['REVERSE']) command: 'REVERSE';
}
