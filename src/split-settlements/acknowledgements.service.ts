import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { GatewayPrincipal } from '../auth/gateway/gateway-principal';
import { GatewayError } from '../common/errors/gateway-error';
import { PreparedStatement, runPrepared } from '../infra/database/prepared';
import { statesThatMay } from '../wallets/wallet-state-machine';
import { AcknowledgementDto } from './acknowledgement.dto';

const PAYING_STATES = statesThatMay('PAY');
const RECEIVING_STATES = statesThatMay('RECEIVE');

/** Which wallet of a split's entry refused it: the settlement wallet that pays, or a partner's that receives. */
type SplitWalletRole = 'PAY' | 'RECEIVE';

/** What split_acknowledge answers: the outcome, with its values by name. */
export type AcknowledgementAnswer =
  | { outcome: 'NOT_FOUND' | 'ACKNOWLEDGED_BEFORE' | 'NOT_SUCCESSFUL' | 'NO_SHARES' | 'DECLINED'; detail: null }
  | { outcome: 'DISTRIBUTED'; detail: { partners: number } }
  | { outcome: 'INSUFFICIENT'; detail: { account_number: string } }
  | { outcome: 'PROFILE_DEACTIVATED'; detail: { account_number: string; role: SplitWalletRole } }
  | { outcome: 'WALLET_STATE'; detail: { account_number: string; role: SplitWalletRole; status: string } };

const ACKNOWLEDGE: PreparedStatement = {
  name: 'split_acknowledge',
  text: `SELECT * FROM split_acknowledge(p_client_id => $1, p_payment_id => $2, p_distribute => $3, p_paying_states => $4,
    p_receiving_states => $5)`,
};

/**
 * split_acknowledge (src/split-settlements/sql/split_acknowledge.sql): the whole acknowledgement in one call; `distribute`
 * pays the splits (SUCCESSFUL), otherwise they are declined. Wallets may pay and receive in the states the wallet
 * state machine allows.
 */
export async function acknowledgeSplits(
  db: DataSource,
  input: { clientId: string; paymentId: string; distribute: boolean },
): Promise<AcknowledgementAnswer> {
  const [answer] = await runPrepared<AcknowledgementAnswer>(db, ACKNOWLEDGE, [
    input.clientId,
    input.paymentId,
    input.distribute,
    PAYING_STATES,
    RECEIVING_STATES,
  ]);
  return answer;
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
    const answer = await acknowledgeSplits(this.db, { clientId: principal.clientId, paymentId, distribute: status === 'SUCCESSFUL' });
    switch (answer.outcome) {
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
        return { payment_id: paymentId, message: `Split settlements distributed to ${answer.detail.partners} partner account(s)` };
      case 'INSUFFICIENT':
        throw GatewayError.validation('Insufficient balance in the settlement wallet to distribute the split settlements');
      case 'PROFILE_DEACTIVATED': {
        const { account_number: number, role } = answer.detail;
        throw GatewayError.validation(`${walletName(role)} ${number} belongs to a deactivated profile`);
      }
      case 'WALLET_STATE': {
        const { account_number: number, status: walletStatus, role } = answer.detail;
        const action = role === 'PAY' ? 'pay' : 'receive';
        throw GatewayError.validation(`${walletName(role)} ${number} is ${walletStatus} and cannot ${action} the split settlements`);
      }
    }
  }
}

function walletName(role: SplitWalletRole): string {
  return role === 'PAY' ? 'Settlement wallet' : 'split_settlements partner account';
}
