import { MoneyProperty } from '../common/openapi/api-docs';
import { ApiProperty } from '@nestjs/swagger';

/** Reversal accepted response (collection document §2 "Collection reversal"). */
export class ReversalAccepted {
  @ApiProperty({ example: 176 }) status_code: number;
  @ApiProperty({ example: 'Reversal accepted' }) status_description: string;
  @ApiProperty({ example: 'REV-2024-0001' }) reversal_reference: string;
  @ApiProperty({ example: 'pending' }) reversal_status: string;
  @ApiProperty({ example: 'Reversal accepted for processing; the result is sent by callback and readable by status query' })
  message: string;
}

/** Reversal status response and callback (same shape). */
export class ReversalResult {
  @ApiProperty({ example: 'REV-2024-0001' }) reversal_reference: string;
  @ApiProperty({ type: String, nullable: true, example: 'SBXREV7Q2K9X' }) provider_transaction_id: string | null;
  @ApiProperty({ enum: ['pending', 'processing', 'successful', 'failed'], example: 'successful' }) reversal_status: string;
  @MoneyProperty('answer', { example: '101.5000' }) reversal_amount: string;
  @ApiProperty({ example: 'KES' }) currency_code: string;
  @ApiProperty({ format: 'date-time' }) reversal_date: string;
  @ApiProperty({ example: 'Order 42' }) receiver_narration: string;
}
