import { FreeObjectProperty, MoneyProperty } from '../common/openapi/api-docs';
import { ApiProperty } from '@nestjs/swagger';

/** The payment result: charge status response and charge callback (collection document §2 "Charge callback"). */
export class PaymentResult {
  @ApiProperty({ enum: ['successful_payment', 'failed_payment', 'reversed_payment', 'pending_payment'], example: 'successful_payment' })
  event: string;
  @MoneyProperty('answer', { example: '100.0000' }) amount: string;
  @FreeObjectProperty({ example: { order: 42 }, description: 'the request extra_data, echoed' }) extra_data: unknown;
  @ApiProperty({ example: 'DEMO' }) client_code: string;
  @ApiProperty({ example: 'KEN' }) country_code: string;
  @ApiProperty({ example: '254712345678' }) payer_msisdn: string;
  @ApiProperty({ format: 'date-time' }) payment_date: string;
  @ApiProperty({ example: 'CS1001' }) service_code: string;
  @ApiProperty({ example: 'KES' }) currency_code: string;
  @ApiProperty({ example: 'ACC-001' }) account_number: string;
  @ApiProperty({ example: '700', description: '700 successful, 701 failed, 702 reversed, 703 pending, 704 jammed' }) payment_status: string;
  @ApiProperty({ example: '1042' }) transaction_id: string;
  @ApiProperty({ example: '1042' }) payment_id: string;
  @ApiProperty({ example: 'Order 42' }) payer_narration: string;
  @ApiProperty({ example: '1042' }) charge_request_id: string;
  @ApiProperty({ example: 'ORDER-42', description: "the merchant's external_reference" }) external_reference: string;
  @ApiProperty({ example: 'Order 42' }) receiver_narration: string;
  @ApiProperty({ example: 'MMONEY_KEN' }) payment_method_code: string;
  @ApiProperty({ example: 'SBX7Q2K9XW', description: "the operator's reference; empty until it answers" }) payer_transaction_id: string;
}
