import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { WalletStatus } from '../wallets/wallet.entity';
import { MoneyRole, moneyRefusal } from '../wallets/wallet-state-machine';
import { MoneyRefusals } from './money-refusals';

/** A wallet as a money movement sees it: ledger identity, currency and whether it may transact. */
export interface MoneyWallet {
  id: string;
  accountNumber: string;
  currency: string;
  status: WalletStatus;
  profileActive: boolean;
}

const SELECT_MONEY_WALLET = `
  SELECT a.id, a.account_number AS "accountNumber", a.currency, w.status, (p.is_active = 1) AS "profileActive"
  FROM ledger_accounts a JOIN wallets w ON w.id = a.id JOIN profiles p ON p.id = w.profile_id`;

/** Looks up wallets for money movements and applies the transaction rules of the provider contract §4. */
@Injectable()
export class MoneyAccounts {
  /**
   * The wallets of a money movement, in one query. Their wallet and profile rows are share-locked until the
   * movement commits, so a state change or a profile deactivation (which update those rows) waits for it and
   * the rules checked here still hold when the money moves.
   */
  async walletsForMoney(manager: EntityManager, clientId: string, accountNumbers: string[]): Promise<MoneyWallet[]> {
    const found: MoneyWallet[] = await manager.query(
      `${SELECT_MONEY_WALLET} WHERE a.client_id = $1 AND a.account_number = ANY($2) FOR SHARE OF w, p`,
      [clientId, accountNumbers],
    );
    return accountNumbers.map((number) => {
      const wallet = found.find((w) => w.accountNumber === number);
      if (!wallet) throw MoneyRefusals.walletNotFound(number);
      return wallet;
    });
  }

  assertMay(wallet: MoneyWallet, role: MoneyRole): void {
    const refusal = moneyRefusal(wallet, role);
    if (refusal) throw MoneyRefusals.walletMayNot(wallet.accountNumber, wallet.status, role, refusal);
  }
}
