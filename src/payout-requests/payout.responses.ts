import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { codeProperty, MoneyProperty } from '../common/openapi/api-docs';
import { PAYOUT_STATUS } from '../payouts/payout';

const PAYMENT_STATUS = codeProperty(PAYOUT_STATUS, PAYOUT_STATUS.SUCCESSFUL);

class PayoutResultData {
  @ApiProperty({ example: 1042 }) payment_id: number;
  @ApiProperty({ example: '1000000009', description: 'the float wallet paid from' }) wallet_account_number: string;
  @MoneyProperty('answer', { example: '15.0000' }) transaction_cost: string;
  @MoneyProperty('answer', { nullable: true, example: '998985.0000', description: 'float balance after the payout' }) wallet_balance:
    string | null;
  @ApiProperty({ type: String, nullable: true, example: 'SBXPAY7Q2K9X', description: "the rail's reference" }) reference: string | null;
  @ApiProperty(PAYMENT_STATUS) payment_status: number;
  @MoneyProperty('answer', { example: '1000.0000' }) amount: string;
  @ApiProperty({ example: 'KES' }) currency: string;
  @ApiProperty({ type: String, nullable: true, example: '0123456789' }) account_number: string | null;
  @ApiProperty({ type: String, nullable: true, example: 'Jane Doe' }) destination_name: string | null;
  @ApiProperty({ type: String, nullable: true, example: 'Salary March' }) payout_description: string | null;
  @ApiProperty({ format: 'date-time' }) transaction_time: string;
  @ApiPropertyOptional({ example: '01', description: 'bank payouts only' }) bank_code?: string;
  @ApiProperty({ example: 'Processed successfully' }) result_description: string;
  @ApiProperty({ example: 'Processed successfully' }) message: string;
  @ApiProperty({ type: String, nullable: true, example: 'Jane' }) recipient_first_name: string | null;
  @ApiProperty({ type: String, nullable: true }) recipient_middle_name: string | null;
  @ApiProperty({ type: String, nullable: true, example: 'Doe' }) recipient_last_name: string | null;
  @ApiProperty({ type: String, nullable: true, example: '254712345678' }) recipient_phone_number: string | null;
}

/** The payout result of a local payout or IMT: status response and callback (disbursement document §2). */
export class PayoutResult {
  @ApiProperty({ example: 'PAY-2024-0001' }) payout_reference: string;
  @ApiProperty({ enum: ['mobile_wallet', 'bank_account', 'paybill', 'till'], example: 'mobile_wallet' }) destination: string;
  @ApiProperty({ type: PayoutResultData }) data: PayoutResultData;
}

/** The B2B result: status response and callback (disbursement document §2). */
export class B2bResult {
  @ApiProperty({ example: 'B2B-2024-0001' }) payout_reference: string;
  @ApiProperty({ example: '1043' }) transaction_id: string;
  @ApiProperty({ type: String, nullable: true, example: 'SBXB2B7Q2K9X' }) payment_reference: string | null;
  @ApiProperty({ example: '1000000009' }) wallet_account: string;
  @ApiProperty({ enum: ['bank_account', 'paybill', 'till'], example: 'paybill' }) destination: string;
  @ApiProperty(PAYMENT_STATUS) payment_status: number;
  @MoneyProperty('answer', { example: '25000.0000' }) amount: string;
  @ApiProperty({ example: 'KES' }) currency: string;
  @ApiProperty({ type: String, nullable: true, example: '888880' }) account_number: string | null;
  @ApiProperty({ type: String, nullable: true, example: 'Acme Supplies' }) destination_name: string | null;
  @ApiProperty({ type: String, nullable: true, example: 'Invoice 77' }) description: string | null;
  @ApiProperty({ format: 'date-time' }) transaction_time: string;
  @MoneyProperty('answer', { nullable: true, example: '973985.0000' }) account_balance: string | null;
  @ApiProperty({ example: 'Processed successfully' }) result_description: string;
}
