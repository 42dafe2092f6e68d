import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

/** One side of a money movement (wallet document §2 "Transaction"). */
export class TransactionRecord {
  @ApiProperty({ format: 'uuid' }) transaction_id: string;
  @ApiProperty({ example: '1000000001', description: 'the wallet account number' }) account: string;
  @ApiProperty({ example: 'TOPUP', description: 'client service code' }) client_service: string;
  @ApiProperty({ enum: ['CREDIT', 'DEBIT'], example: 'CREDIT' }) transaction_type: string;
  @ApiProperty({ example: 'CREDIT_WALLET' }) transaction_source: string;
  @ApiProperty({ example: 'KES' }) currency: string;
  @ApiProperty({ example: '100.0000' }) transaction_amount: string;
  @ApiProperty({ example: '1.5000' }) transaction_fee: string;
  @ApiProperty({ example: '0.0000' }) previous_balance: string;
  @ApiProperty({ example: '98.5000' }) current_balance: string;
  @ApiPropertyOptional({ type: String, nullable: true, example: '1000000002' }) other_party_account: string | null;
  @ApiPropertyOptional({ type: String, nullable: true }) other_party_transaction_hash: string | null;
  @ApiProperty({ example: 'INV-2024-0001', description: "the merchant's reference, unique per client" }) source_transaction_id: string;
  @ApiPropertyOptional({ type: Object, nullable: true, example: { order: 42 } }) source_transaction_data: unknown;
  @ApiPropertyOptional({ type: String, nullable: true, example: 'Top-up' }) transaction_narration: string | null;
  @ApiProperty({ format: 'date-time' }) transaction_date: string;
  @ApiPropertyOptional({ type: String, nullable: true, example: 'USD' }) original_currency: string | null;
  @ApiPropertyOptional({ type: String, nullable: true, example: '1.0000' }) original_amount: string | null;
  @ApiPropertyOptional({ type: String, nullable: true, example: '129.5000' }) exchange_rate: string | null;
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
