import { MoneyProperty } from '../common/openapi/api-docs';
import { ApiProperty, OmitType } from '@nestjs/swagger';
import { PaymentResult } from '../collections/payment.responses';

/** Checkout initiation response (collection document §2). */
export class CheckoutInitiated {
  @ApiProperty({ example: '2f0a7c3e-5d1b-4b8e-9a61-0d6c2f1e9b3a' }) merchant_transaction_id: string;
  @ApiProperty({ example: 'CHK7Q2K9XWZ4' }) checkout_reference: string;
  @ApiProperty({ example: 'KES' }) currency: string;
  @ApiProperty({ example: 1500, description: 'whole base units' }) amount: number;
  @ApiProperty({ format: 'date-time' }) expires_at: string;
  @ApiProperty({ example: 'https://pay.example.com/checkout/CHK7Q2K9XWZ4', description: 'the hosted page to send the payer to' })
  redirect_url: string;
}

/** A payment of the checkout: the payment result, with payment_status as a number. */
export class CheckoutPaymentRecord extends OmitType(PaymentResult, ['payment_status'] as const) {
  @ApiProperty({ example: 700 }) payment_status: number;
  @ApiProperty({ example: '254712345678' }) payment_account_reference: string;
}

/** Checkout status response and checkout callback (same shape, collection document §2). */
export class CheckoutResult {
  @MoneyProperty('answer', { example: '1500' }) amount: string;
  @ApiProperty({ example: 'CHK7Q2K9XWZ4' }) checkout_reference: string;
  @ApiProperty({ example: 'KES' }) currency: string;
  @ApiProperty({ example: '2f0a7c3e-5d1b-4b8e-9a61-0d6c2f1e9b3a' }) merchant_transaction_id: string;
  @ApiProperty({ example: 'Order 42' }) narration: string;
  @ApiProperty({ type: [CheckoutPaymentRecord], description: 'the settled payments (pending ones are left out)' })
  payments: CheckoutPaymentRecord[];
  @ApiProperty({ example: 801, description: '801 paid, 802 part paid, 803 unpaid, 820 expired, 840 reversed, 850 jammed, 851 processing' })
  status: number;
  @ApiProperty({ format: 'date-time' }) timestamp: string;
}

/** What the hosted page polls. */
export class CheckoutPageState {
  @ApiProperty({ example: 803 }) status: number;
  @ApiProperty({ example: 'KES' }) currency: string;
  @ApiProperty({ example: 1500 }) amount: number;
  @ApiProperty({ example: 0 }) paid: number;
  @ApiProperty({ example: 1500 }) outstanding: number;
  @ApiProperty({ format: 'date-time' }) expires_at: string;
  @ApiProperty({ example: false }) expired: boolean;
  @ApiProperty({ type: Number, nullable: true, example: null }) last_payment_status: number | null;
  @ApiProperty({ type: String, nullable: true, description: "the merchant's redirect_url once paid" }) redirect_to: string | null;
}

export class CheckoutPaymentStarted {
  @ApiProperty({ example: 851 }) status: number;
  @ApiProperty({ example: 703 }) payment_status: number;
}
