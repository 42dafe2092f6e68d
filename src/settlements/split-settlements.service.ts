import { Injectable } from '@nestjs/common';
import Decimal from 'decimal.js';
import { EntityManager } from 'typeorm';
import { GatewayError } from '../common/errors/gateway-error';
import { amountProblem, formatAmount, Money } from '../common/money';
import { SplitShare } from '../payments/payment';
import { EntryBuilder } from '../ledger/entry-builder';
import { LedgerService } from '../ledger/ledger.service';
import { WalletStatus } from '../wallets/wallet.entity';
import { mayPay, mayReceive } from '../wallets/wallet-state-machine';

const MAX_SPLITS = 50;

/**
 * Split settlements (collection document §2, provider contract §5): shares of a payment for partner wallets of
 * the same client, checked when the payment is accepted and paid out of the settlement wallet in one entry when
 * the merchant confirms the payment.
 */
@Injectable()
export class SplitSettlementsService {
  constructor(private readonly ledger: LedgerService) {}

  /**
   * Reads `extra_data.split_settlements` and checks it against the payment: partner wallets exist, are active
   * and in the payment's currency; amounts positive; their sum at most the amount; the service's mandatory
   * partners all present. Returns null when the payment has no splits and the service requires none.
   */
  async validate(
    manager: EntityManager,
    payment: {
      clientId: string;
      clientServiceId: string;
      currency: string;
      amount: Decimal;
      extraData: Record<string, unknown> | undefined;
    },
  ): Promise<SplitShare[] | null> {
    const raw = payment.extraData?.split_settlements;
    const mandatory: Array<{ account_number: string }> = await manager.query(
      `SELECT a.account_number FROM client_service_partners p JOIN ledger_accounts a ON a.id = p.account_id
       WHERE p.client_service_id = $1 ORDER BY a.account_number`,
      [payment.clientServiceId],
    );
    if (raw === undefined || raw === null) {
      if (mandatory.length > 0) throw missingPartners(mandatory.map((m) => m.account_number));
      return null;
    }
    if (!Array.isArray(raw) || raw.length === 0 || raw.length > MAX_SPLITS) {
      throw GatewayError.validation(`split_settlements must be an array of 1 to ${MAX_SPLITS} items`);
    }
    const items = raw.map((item, index) => parseItem(item, index));
    const accounts = [...new Set(items.map((i) => i.account))];
    if (accounts.length !== items.length) throw GatewayError.validation('split_settlements names a partner account more than once');
    const wallets: Array<{ id: string; account_number: string; currency: string; status: string; profile_active: boolean }> =
      await manager.query(
        `SELECT a.id, a.account_number, a.currency, w.status, (p.is_active = 1) AS profile_active
       FROM ledger_accounts a JOIN wallets w ON w.id = a.id JOIN profiles p ON p.id = w.profile_id
       WHERE a.client_id = $1 AND a.account_number = ANY($2)`,
        [payment.clientId, accounts],
      );
    for (const item of items) {
      const wallet = wallets.find((w) => w.account_number === item.account);
      if (!wallet) throw GatewayError.validation(`split_settlements partner account ${item.account} does not exist`);
      if (wallet.status !== 'ACTIVE' || !wallet.profile_active) {
        throw GatewayError.validation(`split_settlements partner account ${item.account} is not active`);
      }
      if (wallet.currency !== payment.currency) {
        throw GatewayError.validation(`split_settlements partner account ${item.account} is not a ${payment.currency} wallet`);
      }
    }
    const total = items.reduce((sum, i) => sum.plus(i.amount), new Money(0));
    if (total.gt(payment.amount)) {
      throw GatewayError.validation(`split_settlements total ${formatAmount(total)} exceeds the amount ${formatAmount(payment.amount)}`);
    }
    const missing = mandatory.map((m) => m.account_number).filter((a) => !accounts.includes(a));
    if (missing.length > 0) throw missingPartners(missing);
    return items.map((i) => ({ ...i, amount: i.amount.toFixed(), accountId: wallets.find((w) => w.account_number === i.account)!.id }));
  }

  /**
   * Pays the shares out of the settlement wallet: one entry; the wallet's floor applies. The wallets are checked
   * again once the ledger holds their rows locked (a state change locks the same rows): a partner suspended,
   * closed or deactivated since acceptance cannot receive, and a settlement wallet that may not pay cannot pay
   * (provider contract §4); the caller's transaction then rolls back and the confirmation can be repeated.
   */
  async distribute(manager: EntityManager, clientId: string, settlementAccountId: string, shares: SplitShare[]): Promise<string> {
    const entry = new EntryBuilder();
    for (const share of shares) {
      entry.debit(settlementAccountId, new Money(share.amount)).credit(share.accountId, new Money(share.amount));
    }
    const posted = await this.ledger.postEntry(manager, { clientId, kind: 'PAYMENT_SPLIT', lines: entry.lines() });
    const wallets: Array<{ id: string; account_number: string; status: WalletStatus; profile_active: boolean }> = await manager.query(
      `SELECT a.id, a.account_number, w.status, (p.is_active = 1) AS profile_active
       FROM ledger_accounts a JOIN wallets w ON w.id = a.id JOIN profiles p ON p.id = w.profile_id WHERE a.id = ANY($1)`,
      [[settlementAccountId, ...shares.map((s) => s.accountId)]],
    );
    for (const wallet of wallets) {
      const paying = wallet.id === settlementAccountId;
      if (!wallet.profile_active) {
        throw GatewayError.validation(
          `${paying ? 'Settlement wallet' : 'split_settlements partner account'} ${wallet.account_number} belongs to a deactivated profile`,
        );
      }
      if (paying ? !mayPay(wallet.status) : !mayReceive(wallet.status)) {
        throw GatewayError.validation(
          `${paying ? 'Settlement wallet' : 'split_settlements partner account'} ${wallet.account_number} is ${wallet.status} and cannot ${paying ? 'pay' : 'receive'} the split settlements`,
        );
      }
    }
    return posted.entryId;
  }
}

function parseItem(item: unknown, index: number): { account: string; amount: Decimal; reason: string } {
  const where = `split_settlements[${index}]`;
  if (!item || typeof item !== 'object' || Array.isArray(item)) throw GatewayError.validation(`${where} must be an object`);
  const { account, amount, reason } = item as Record<string, unknown>;
  if (typeof account !== 'string' || !account || account.length > 32)
    throw GatewayError.validation(`${where}.account must be a wallet account number`);
  const problem = amountProblem(amount);
  if (problem) throw GatewayError.validation(`${where}.amount ${problem}`);
  if (reason !== undefined && (typeof reason !== 'string' || reason.length > 255)) {
    throw GatewayError.validation(`${where}.reason must be a string of at most 255 characters`);
  }
  return { account, amount: new Money(amount as string), reason: (reason as string | undefined) ?? '' };
}

function missingPartners(accounts: string[]): GatewayError {
  return GatewayError.validation(`split_settlements must include the service's mandatory partner accounts: ${accounts.join(', ')}`);
}
