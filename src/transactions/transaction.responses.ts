import { FreeObjectProperty, MoneyProperty } from '../common/openapi/api-docs';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

/** One side of a money movement (wallet document §2 "Transaction"). */
export class TransactionRecord {
  @ApiProperty({ format: 'uuid' }) transaction_id: string;
  @ApiProperty({ example: '10000100001', description: 'the wallet account number' }) account: string;
  @ApiProperty({
    type: String,
    nullable: true,
    example: 'CS1001',
    description: 'client service code; null for a reversal or an operator funding',
  })
  client_service: string | null;
  @ApiProperty({ enum: ['CREDIT', 'DEBIT'], example: 'CREDIT' }) transaction_type: string;
  @ApiProperty({ example: 'CREDIT_WALLET' }) transaction_source: string;
  @ApiProperty({ example: 'KES' }) currency: string;
  @MoneyProperty('answer', { example: '100.0000' }) transaction_amount: string;
  @MoneyProperty('answer', { example: '1.5000' }) transaction_fee: string;
  @MoneyProperty('answer', { example: '0.0000' }) previous_balance: string;
  @MoneyProperty('answer', { example: '98.5000' }) current_balance: string;
  @ApiPropertyOptional({ type: String, nullable: true, example: '1000000002' }) other_party_account: string | null;
  @ApiPropertyOptional({ type: String, nullable: true }) other_party_transaction_hash: string | null;
  @ApiProperty({
    type: String,
    nullable: true,
    example: 'INV-2024-0001',
    description: "the merchant's reference, unique per client; null for an operator funding or a reversal sent without one",
  })
  source_transaction_id: string | null;
  @FreeObjectProperty({ optional: true, nullable: true, example: { order: 42 } }) source_transaction_data: unknown;
  @ApiPropertyOptional({ type: String, nullable: true, example: 'Top-up' }) transaction_narration: string | null;
  @ApiProperty({ format: 'date-time' }) transaction_date: string;
  @ApiPropertyOptional({ type: String, nullable: true, example: 'USD' }) original_currency: string | null;
  @MoneyProperty('answer', { optional: true, nullable: true, example: '1.0000' }) original_amount: string | null;
  @MoneyProperty('answer', { optional: true, nullable: true, example: '129.5000' }) exchange_rate: string | null;
}

/** Transfers and reversals answer with both sides. */
export class TransactionPair {
  @ApiProperty({ type: TransactionRecord, description: 'the debit' }) source_transaction: TransactionRecord;
  @ApiProperty({ type: TransactionRecord, description: 'the credit' }) destination_transaction: TransactionRecord;
}

export class TransactionHistoryPage {
  @ApiProperty({ type: [TransactionRecord] }) records: TransactionRecord[];
  @ApiProperty({ type: String, nullable: true, description: 'pass as `cursor` for the next page; null on the last page' })
  next_cursor: string | null;
}
