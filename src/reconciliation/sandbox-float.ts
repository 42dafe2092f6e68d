import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import Decimal from 'decimal.js';
import { DataSource } from 'typeorm';
import { PAYMENT_STATUS } from '../collections/payment';
import type { OperatorBalance, ReconciledRail } from '../rails/operator-statement';

/** The simulated operator accounts hold shillings, as the Kenyan operators they play. */
const SANDBOX_CURRENCY = 'KES';

/**
 * What the simulated M-Pesa account holds of one client's money: the charges it took in less the reversals it paid
 * back (a reversed charge was taken in first). Payouts and top-ups leave nothing there: the simulator pays out
 * exactly what their hold funds, once we settle them, and a hold not yet settled has not reached it.
 */
const MPESA_FLOAT_OF_CLIENT = `
  SELECT (coalesce((SELECT sum(p.total_amount) FROM payments p
                     WHERE p.client_id = $1 AND p.currency = $2 AND p.payment_status IN (${PAYMENT_STATUS.SUCCESSFUL}, ${PAYMENT_STATUS.REVERSED})), 0)
        - coalesce((SELECT sum(p.total_amount) FROM collection_reversals v
                      JOIN payments p ON p.client_id = v.client_id AND p.id = v.payment_id
                     WHERE v.client_id = $1 AND p.currency = $2 AND v.status = 'successful'), 0))::text AS float`;

/**
 * The sandbox rails' operator balance (SANDBOX_BALANCES), derived from our business records of what each simulator
 * did, client by client (each statement names its client; the sum is made here), so that `recon:run` on the sandbox
 * completes with a balance line, zero while our ledger agrees with those records (docs/decisions.md).
 */
@Injectable()
export class SandboxFloat {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  async balance(rail: ReconciledRail): Promise<OperatorBalance> {
    const at = new Date();
    let amount = new Decimal(0);
    if (rail === 'mpesa') {
      const clients: { id: string }[] = await this.db.query(`SELECT id::text AS id FROM clients ORDER BY id`);
      for (const client of clients) {
        const [row] = await this.db.query(MPESA_FLOAT_OF_CLIENT, [client.id, SANDBOX_CURRENCY]);
        amount = amount.plus(row.float);
      }
    }
    return { amount, currency: SANDBOX_CURRENCY, at, evidence: { simulator: rail, derived_from: 'our records', clients_summed: true } };
  }
}
