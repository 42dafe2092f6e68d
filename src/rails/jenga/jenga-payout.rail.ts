import { Injectable } from '@nestjs/common';
import Decimal from 'decimal.js';
import { PayoutAtRail, PayoutForAcceptance, PayoutOutcome, PayoutRail } from '../payout.rail';
import { requestOutcome } from '../rail-outcome';
import type { RailRequestRow } from '../rail-requests.repository';
import { bankName } from './bank-codes';
import { JENGA, JengaGateway } from './jenga-gateway';

/** PesaLink's own limit on one transfer. */
const PESALINK_MAXIMUM = new Decimal(999_999);
/** The bank of a B2B BANK_ACCOUNT_NUMBER payout, which names no bank: Equity's own accounts. */
const EQUITY = '68';

/**
 * Bank payouts (local BANK, IMT to a bank, B2B to a bank account) as PesaLink transfers through Jenga, from our
 * source account. A payout is one transfer; asking again reads what Jenga answered, never re-sends.
 */
@Injectable()
export class JengaPayoutRail implements PayoutRail {
  constructor(private readonly gateway: JengaGateway) {}

  acceptanceProblem({ destination, bankCode, amount, currency, what }: PayoutForAcceptance): string | null {
    if (currency !== 'KES') return `PesaLink moves Kenya shillings only; ${what} is in ${currency}`;
    const value = new Decimal(amount);
    if (value.decimalPlaces() > 2) return `PesaLink moves cents at most; ${what} ${value.toFixed()} has more decimals`;
    if (value.gt(PESALINK_MAXIMUM)) return `PesaLink moves at most KES 999,999 per transfer`;
    if (destination === 'BANK' && !bankName(bankCode)) return `recipient_bank_code ${bankCode ?? ''} is not a bank PesaLink reaches`;
    return null;
  }

  operatorFor(): typeof JENGA {
    return JENGA;
  }

  settleDelayMs(): number {
    return 0;
  }

  async submit(payout: PayoutAtRail): Promise<PayoutOutcome> {
    const request = await this.gateway.pesalink({
      id: payout.payoutId,
      clientId: payout.clientId,
      bankCode: payout.destination === 'BANK' ? payout.bankCode!.padStart(2, '0') : EQUITY,
      accountNumber: payout.recipientNumber,
      accountName: payout.recipientName,
      amount: payout.amount,
      description: `Payout ${payout.payoutId}`,
    });
    return outcome(request);
  }

  async outcomeOf(payout: PayoutAtRail): Promise<PayoutOutcome> {
    const request = await this.gateway.bySubject(payout.payoutId);
    return request ? outcome(request) : { status: 'PENDING' };
  }
}

const outcome = (request: RailRequestRow) => requestOutcome(request, 'The bank transfer failed');
