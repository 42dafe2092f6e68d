import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsISO8601, IsObject, IsOptional, IsString, Matches, MaxLength } from 'class-validator';
import { CURRENCIES } from '../common/currencies';
import { IsBoundedJson } from '../common/validation/json-size';
import { IsCurrencyCode, IsMoneyAmount, LIMITS, RequiredText } from '../common/validation/validators';

class MoneyRequestDto {
  @ApiProperty() @RequiredText(LIMITS.code) client_code: string;
  @ApiProperty() @RequiredText(LIMITS.code) client_service_code: string;
  @ApiProperty({ example: 100 }) @IsMoneyAmount() transaction_amount: number | string;
  @ApiProperty({ enum: CURRENCIES }) @IsCurrencyCode() currency: string;
  @ApiProperty() @RequiredText(LIMITS.reference) source_transaction_id: string;
  @ApiPropertyOptional() @IsOptional() @IsObject() @IsBoundedJson() source_transaction_data?: Record<string, unknown>;
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(LIMITS.text) transaction_narration?: string;
  @ApiPropertyOptional()
  @IsOptional()
  @IsISO8601({ strict: true })
  // ISO 8601 also has week (2009-W01-1) and ordinal (2009-123) dates, which JavaScript cannot read: calendar dates only.
  @Matches(/^\d{4}-\d{2}-\d{2}(T|$)/, { message: 'transaction_date must be a calendar date or date-time (YYYY-MM-DD…)' })
  transaction_date?: string;
}

export class CreditDebitDto extends MoneyRequestDto {
  @ApiProperty() @RequiredText(LIMITS.code) account_number: string;
}

export class TransferDto extends MoneyRequestDto {
  @ApiProperty() @RequiredText(LIMITS.code) source_account_number: string;
  @ApiProperty() @RequiredText(LIMITS.code) destination_account_number: string;
  @ApiProperty({ example: 'INTERNAL' }) @RequiredText(LIMITS.code) transaction_source: string;
}

export class ReversalDto {
  @ApiPropertyOptional() @IsOptional() @RequiredText(LIMITS.reference) source_transaction_id?: string;
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(LIMITS.text) transaction_narration?: string;
}

export const MONEY_COMMANDS = ['CREDIT', 'DEBIT'] as const;
export type MoneyCommand = (typeof MONEY_COMMANDS)[number];

export class MoneyCommandQuery {
  @ApiProperty({ enum: MONEY_COMMANDS }) @IsIn(MONEY_COMMANDS) command: MoneyCommand;
}

export class ReverseCommandQuery {
  @ApiProperty({ enum: ['REVERSE'] }) @IsIn(['REVERSE']) command: 'REVERSE';
}
