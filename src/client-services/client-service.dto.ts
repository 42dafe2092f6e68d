import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsBoolean, IsIn, IsOptional, ValidateNested } from 'class-validator';
import { IsMoneyAmount, IsNonNegativeMoney, LIMITS, RequiredText } from '../common/validation/validators';
import { MoneyProperty } from '../common/openapi/api-docs';

export const SERVICE_CODES = ['CUSTOM_SERVICE'] as const;
export const FEE_TYPES = ['FIXED', 'PERCENTAGE'] as const;

export class FeeTierDto {
  @MoneyProperty('request', { example: '0' }) @IsNonNegativeMoney() minimum_amount: number | string;
  @MoneyProperty('request', { example: '1000' }) @IsMoneyAmount() maximum_amount: number | string;
  @ApiProperty({ example: 'FIXED', enum: FEE_TYPES }) @IsIn(FEE_TYPES) fee_type: (typeof FEE_TYPES)[number];
  @MoneyProperty('request', { example: '10' }) @IsNonNegativeMoney() fee: number | string;
}

export class CreateClientServiceDto {
  @ApiProperty({ example: 'DEMO' }) @RequiredText(LIMITS.code) client_code: string;
  @ApiProperty({ example: 'Wallet top-up' }) @RequiredText(LIMITS.name) client_service_name: string;
  @ApiProperty({ example: 'CUSTOM_SERVICE', enum: SERVICE_CODES }) @IsIn(SERVICE_CODES) service_code: (typeof SERVICE_CODES)[number];
  @ApiProperty({ example: true }) @IsBoolean() has_transaction_fee: boolean;
  @ApiPropertyOptional({ example: 'FIXED', enum: FEE_TYPES })
  @IsOptional()
  @IsIn(FEE_TYPES)
  transaction_fee_type?: (typeof FEE_TYPES)[number];
  @MoneyProperty('request', { example: '1.5', optional: true }) @IsOptional() @IsNonNegativeMoney() transaction_fee?: number | string;
  @MoneyProperty('request', { example: '10' }) @IsNonNegativeMoney() minimum_transaction_amount: number | string;
  @MoneyProperty('request', { example: '150000' }) @IsMoneyAmount() maximum_transaction_amount: number | string;
  @ApiProperty({ example: 1, enum: [0, 1] }) @IsIn([0, 1]) is_active: number;
  @ApiPropertyOptional({ type: [FeeTierDto] })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(50)
  @ValidateNested({ each: true })
  @Type(() => FeeTierDto)
  transaction_fee_tiers?: FeeTierDto[];
}
