import Decimal from 'decimal.js';
import type { OperatorMovement } from '../../src/rails/operator-statement';

/** M-Pesa's row for one of our charges (a payments row), as an adapter gives it: paid, the full amount, its time. */
export function operatorRowOfCharge(payment: Record<string, any>, overrides: Partial<OperatorMovement> = {}): OperatorMovement {
  return {
    operatorReference: `OP${payment.id}`,
    ourReference: String(payment.id),
    counterparty: payment.payer_msisdn,
    amount: new Decimal(payment.total_amount),
    currency: 'KES',
    direction: 'IN',
    status: 'SUCCEEDED',
    at: new Date(payment.created_at),
    evidence: { TransID: `OP${payment.id}` },
    ...overrides,
  };
}
