import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { GatewayPrincipal } from '../auth/gateway/gateway-principal';
import { AcknowledgementDto } from './acknowledgement.dto';
import { GatewayError } from '../common/errors/gateway-error';
import { FloorBreachError } from '../ledger/ledger.errors';
import { PAYMENT_STATUS } from '../payments/payment';
import { PaymentsRepository } from '../payments/payments.repository';
import { PaymentsService } from '../payments/payments.service';
import { SplitSettlementsService } from './split-settlements.service';

/**
 * POST /transactions/acknowledge: the merchant confirms a successful payment. SUCCESSFUL pays its split
 * settlements out of the settlement wallet in one entry; FAILED distributes nothing. Accepted once per payment.
 */
@Injectable()
export class AcknowledgementsService {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly splits: SplitSettlementsService,
    private readonly payments: PaymentsRepository,
    private readonly outcomes: PaymentsService,
  ) {}

  async acknowledge(principal: GatewayPrincipal, { payment_id: paymentId, status }: AcknowledgementDto) {
    try {
      return await this.db.transaction(async (manager) => {
        const payment = await this.payments.forAcknowledgement(manager, principal.clientId, paymentId);
        if (!payment) throw GatewayError.notFound();
        if (payment.acknowledged_at) throw new GatewayError(409, 172, 'Validation Failed', 'Payment already acknowledged');
        if (payment.payment_status !== PAYMENT_STATUS.SUCCESSFUL)
          throw GatewayError.validation('Only a successful payment can be acknowledged');
        const shares = payment.split_settlements;
        if (status === 'FAILED' || !shares) {
          await this.outcomes.acknowledge(manager, paymentId, { status: shares ? 'DECLINED' : null, entryId: null });
          const message = !shares
            ? 'Payment acknowledged; it has no split settlements'
            : 'Payment acknowledged; split settlements were not distributed';
          return { payment_id: paymentId, message };
        }
        const entryId = await this.splits.distribute(manager, principal.clientId, payment.settlement_account_id, shares);
        await this.outcomes.acknowledge(manager, paymentId, { status: 'DISTRIBUTED', entryId });
        return { payment_id: paymentId, message: `Split settlements distributed to ${shares.length} partner account(s)` };
      });
    } catch (error) {
      if (error instanceof FloorBreachError)
        throw GatewayError.validation('Insufficient balance in the settlement wallet to distribute the split settlements');
      throw error;
    }
  }
}
