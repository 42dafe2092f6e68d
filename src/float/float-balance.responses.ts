import { MoneyProperty } from '../common/openapi/api-docs';
import { ApiProperty } from '@nestjs/swagger';

/** A float wallet's balance (disbursement document §2 "Float balance"). */
export class FloatBalance {
  @MoneyProperty('answer', { example: '999890.0000', description: 'available' }) balance: string;
  @ApiProperty({ example: 'KES' }) currency: string;
  @ApiProperty({ example: 'ACTIVE' }) status: string;
  @MoneyProperty('answer', { example: '1000000.0000', description: 'available + reserved' }) ledger_balance: string;
  @MoneyProperty('answer', { example: '110.0000', description: 'held for payouts in flight' }) reserved_balance: string;
}
