import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { GatewayPrincipal } from '../auth/gateway/gateway-principal';
import { GatewayError } from '../common/errors/gateway-error';
import { PreparedStatement, runPrepared } from '../infra/database/prepared';
import { statesThatMay } from '../wallets/wallet-state-machine';
import { AcknowledgementDto } from './acknowledgement.dto';

/** split_acknowledge (migration SplitAcknowledgementOneCall): the whole acknowledgement in one call. */
const ACKNOWLEDGE: PreparedStatement = { name: 'split_acknowledge', text: 'SELECT * FROM split_acknowledge($1, $2, $3, $4, $5)' };
const PAYING_STATES = statesThatMay('PAY');
const RECEIVING_STATES = statesThatMay('RECEIVE');

interface AcknowledgementAnswer {
  outcome:
    | 'NOT_FOUND'
    | 'ACKNOWLEDGED_BEFORE'
    | 'NOT_SUCCESSFUL'
    | 'NO_SHARES'
    | 'DECLINED'
    | 'DISTRIBUTED'
    | 'INSUFFICIENT'
    | 'PROFILE_DEACTIVATED'
    | 'WALLET_STATE';
  detail: string[] | null;
}

/**
 * POST /transactions/acknowledge: the merchant confirms a successful payment. SUCCESSFUL pays its split
 * settlements out of the settlement wallet in one entry; FAILED distributes nothing. Accepted once per payment.
 * One database call checks the payment, moves the money and records the acknowledgement.
 */
@Injectable()
export class AcknowledgementsService {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  async acknowledge(principal: GatewayPrincipal, { payment_id: paymentId, status }: AcknowledgementDto) {
    const [{ outcome, detail }] = await runPrepared<AcknowledgementAnswer>(this.db, ACKNOWLEDGE, [
      principal.clientId,
      paymentId,
      status === 'SUCCESSFUL',
      PAYING_STATES,
      RECEIVING_STATES,
    ]);
    switch (outcome) {
      case 'NOT_FOUND':
        throw GatewayError.notFound();
      case 'ACKNOWLEDGED_BEFORE':
        throw new GatewayError(409, 172, 'Validation Failed', 'Payment already acknowledged');
      case 'NOT_SUCCESSFUL':
        throw GatewayError.validation('Only a successful payment can be acknowledged');
      case 'NO_SHARES':
        return { payment_id: paymentId, message: 'Payment acknowledged; it has no split settlements' };
      case 'DECLINED':
        return { payment_id: paymentId, message: 'Payment acknowledged; split settlements were not distributed' };
      case 'DISTRIBUTED':
        return { payment_id: paymentId, message: `Split settlements distributed to ${detail![0]} partner account(s)` };
      case 'INSUFFICIENT':
        throw GatewayError.validation('Insufficient balance in the settlement wallet to distribute the split settlements');
      case 'PROFILE_DEACTIVATED':
        throw GatewayError.validation(`${walletName(detail![1])} ${detail![0]} belongs to a deactivated profile`);
      case 'WALLET_STATE': {
        const [number, walletStatus, role] = detail!;
        const action = role === 'PAY' ? 'pay' : 'receive';
        throw GatewayError.validation(`${walletName(role)} ${number} is ${walletStatus} and cannot ${action} the split settlements`);
      }
    }
  }
}

function walletName(role: string): string {
  return role === 'PAY' ? 'Settlement wallet' : 'split_settlements partner account';
}
