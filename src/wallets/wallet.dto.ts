import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsIn, IsOptional, IsString, MaxLength } from 'class-validator';
import { CURRENCIES } from '../common/currencies';
import { MoneyProperty } from '../common/openapi/api-docs';
import { IsCurrencyCode, IsNonNegativeMoney, LIMITS, RequiredText } from '../common/validation/validators';
import { WALLET_STATUSES } from './wallet.entity';
import type { WalletStatus } from './wallet.entity';
import { WALLET_COMMANDS } from './wallet-state-machine';
import type { WalletCommand } from './wallet-state-machine';

export class CreateAccountTypeDto {
  @ApiProperty({ example: 'DEMO' }) @RequiredText(LIMITS.code) client_code: string;
  @ApiProperty({ example: 'Savings' }) @RequiredText(LIMITS.name) account_type_name: string;
  @ApiPropertyOptional({ example: 'Customer savings wallets' })
  @IsOptional()
  @IsString()
  @MaxLength(LIMITS.text)
  account_type_description?: string;
  @ApiPropertyOptional({ example: 1, enum: [0, 1], description: 'default 1' }) @IsOptional() @IsIn([0, 1]) is_active?: number;
}

export class CreateWalletDto {
  @ApiProperty({ example: 'DEMO' }) @RequiredText(LIMITS.code) client_code: string;
  @ApiProperty({ example: 'CUST-0001' }) @RequiredText(LIMITS.reference) client_profile_id: string;
  @ApiProperty({ example: 'SAVINGS' }) @RequiredText(LIMITS.code) account_type_code: string;
  @ApiProperty({ example: 'Jane Doe savings' }) @RequiredText(LIMITS.name) account_name: string;
  @ApiProperty({ example: 'KES', enum: CURRENCIES }) @IsCurrencyCode() currency: string;
  @MoneyProperty('request', { example: 0 }) @IsNonNegativeMoney() minimum_balance: number | string;
  @ApiProperty({ example: false }) @IsBoolean() can_overdraw: boolean;
  @ApiProperty({ example: 'ACTIVE', enum: WALLET_STATUSES }) @IsIn(WALLET_STATUSES) status: WalletStatus;
  @ApiPropertyOptional({ example: 'Opened at the branch' }) @IsOptional() @IsString() @MaxLength(LIMITS.text) status_description?: string;
}

export class WalletCommandQuery {
  @ApiProperty({ enum: WALLET_COMMANDS }) @IsIn(WALLET_COMMANDS) command: WalletCommand;
}
