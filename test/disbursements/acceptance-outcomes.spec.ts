import type { AirtimeAcceptance } from '../../src/airtime/airtime.repository';
import { PAYING_SERVICE_REFUSALS } from '../../src/float/paying-service';
import type { PayoutAcceptance } from '../../src/payouts/payouts.repository';
import { outcomesWritten } from '../support/sql-outcomes';

/**
 * Payout and airtime acceptance answer the outcomes their TypeScript types declare, the types being the one list:
 * these records are typed by outcome, so the compiler holds each to its type both ways, and the SQL sources must
 * write exactly those outcomes. A name changed on one side only fails here, without a database;
 * acceptance-refusals.e2e.spec.ts pins what the API answers for each.
 */
const PAYOUT_OUTCOMES: Record<PayoutAcceptance['outcome'], true> = {
  ACCEPTED: true,
  DUPLICATE: true,
  SERVICE_NOT_ALLOWED: true,
  NO_FLOAT: true,
  FLOAT_NOT_ACTIVE: true,
  CURRENCY: true,
  AMOUNT_BOUNDS: true,
  INSUFFICIENT_FLOAT: true,
};
const AIRTIME_OUTCOMES: Record<AirtimeAcceptance['outcome'], true> = {
  ACCEPTED: true,
  DUPLICATE: true,
  NO_DEFAULT_SERVICE: true,
  SERVICE_NOT_ALLOWED: true,
  NO_FLOAT: true,
  FLOAT_NOT_ACTIVE: true,
  AMOUNT_BOUNDS: true,
  INSUFFICIENT_FLOAT: true,
};

describe('acceptance functions write the outcomes their wrappers declare', () => {
  // Both pass on paying_service's refusal as their outcome.
  const payingService = outcomesWritten('float/sql/paying_service.sql', 'caseResults');
  const union = (...lists: string[][]) => [...new Set(lists.flat())].sort();

  it('paying_service: its refusals (PAYING_SERVICE_REFUSALS)', () => {
    expect(payingService).toEqual([...PAYING_SERVICE_REFUSALS].sort());
  });

  it('payout_accept_batch: PayoutAcceptance', () => {
    const written = union(outcomesWritten('payouts/sql/payout_accept_batch.sql', 'caseResults'), payingService);
    expect(written).toEqual(Object.keys(PAYOUT_OUTCOMES).sort());
  });

  it('airtime_accept: AirtimeAcceptance', () => {
    const written = union(outcomesWritten('airtime/sql/airtime_accept.sql'), payingService);
    expect(written).toEqual(Object.keys(AIRTIME_OUTCOMES).sort());
  });
});
