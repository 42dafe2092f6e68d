import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { GATEWAY_CODES, GatewayError } from '../common/errors/gateway-error';
import { formatAmount } from '../common/money';
import { FloatHoldsService } from './float-holds.service';

export interface FloatBalance {
  /** Available: what new payouts can use (the wallet's ledger balance; holds have already left it). */
  balance: string;
  currency: string;
  status: string;
  /** Available plus reserved: the float before the payouts in flight settle or come back. */
  ledger_balance: string;
  /** Held for payouts, B2B, IMT and airtime in flight. */
  reserved_balance: string;
}

/** The float balance of the disbursement document §2, for the caller's settlement (float) wallets only. */
@Injectable()
export class FloatBalanceService {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly holds: FloatHoldsService,
  ) {}

  async balanceOf(clientId: string, accountNumber: string): Promise<FloatBalance> {
    // One snapshot, so the wallet's balance and the holds on it are read at the same moment.
    return this.db.transaction('REPEATABLE READ', async (manager) => {
      const [float] = await manager.query(
        `SELECT a.id, a.currency, a.balance, w.status
         FROM ledger_accounts a JOIN wallets w ON w.client_id = a.client_id AND w.id = a.id
         WHERE a.account_number = $1 AND a.client_id = $2
           AND EXISTS (SELECT 1 FROM client_services s WHERE s.client_id = a.client_id AND s.settlement_account_id = a.id)`,
        [accountNumber, clientId],
      );
      if (!float) throw new GatewayError(404, GATEWAY_CODES.NOT_FOUND, 'Account not found', `No float account ${accountNumber}`);
      const reserved = await this.holds.reservedBalance(manager, float.id);
      return {
        balance: formatAmount(float.balance),
        currency: float.currency,
        status: float.status,
        ledger_balance: formatAmount(reserved.plus(float.balance)),
        reserved_balance: formatAmount(reserved),
      };
    });
  }

  /** The float balances of every settlement (float) wallet of the client's services (the portal's overview). */
  async balancesOf(clientId: string): Promise<Array<FloatBalance & { account_number: string }>> {
    const floats: { account_number: string }[] = await this.db.query(
      `SELECT DISTINCT a.account_number
       FROM client_services s JOIN ledger_accounts a ON a.client_id = s.client_id AND a.id = s.settlement_account_id
       WHERE s.client_id = $1 AND a.client_id = $1 ORDER BY a.account_number`,
      [clientId],
    );
    return Promise.all(floats.map(async ({ account_number }) => ({ account_number, ...(await this.balanceOf(clientId, account_number)) })));
  }
}
