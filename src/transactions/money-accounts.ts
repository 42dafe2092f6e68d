import { BadRequestException, Injectable, NotFoundException } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { WalletStatus } from '../wallets/wallet.entity';
import { mayPay, mayReceive } from '../wallets/wallet-state-machine';

/** A wallet as a money movement sees it: ledger identity, currency and whether it may transact. */
export interface MoneyWallet {
  id: string;
  accountNumber: string;
  currency: string;
  status: WalletStatus;
  profileActive: boolean;
}

export type WalletRole = 'PAY' | 'RECEIVE';

const SELECT_MONEY_WALLET = `
  SELECT a.id, a.account_number AS "accountNumber", a.currency, w.status, (p.is_active = 1) AS "profileActive"
  FROM ledger_accounts a JOIN wallets w ON w.id = a.id JOIN profiles p ON p.id = w.profile_id`;

/** Looks up wallets for money movements and applies the transaction rules of the provider contract §4. */
@Injectable()
export class MoneyAccounts {
  async wallet(manager: EntityManager, clientId: string, accountNumber: string): Promise<MoneyWallet> {
    const [wallet] = await manager.query(`${SELECT_MONEY_WALLET} WHERE a.client_id = $1 AND a.account_number = $2`, [clientId, accountNumber]);
    if (!wallet) throw new NotFoundException(`Wallet ${accountNumber} not found`);
    return wallet;
  }

  assertMay(wallet: MoneyWallet, role: WalletRole): void {
    if (!wallet.profileActive) {
      throw new BadRequestException(`Wallet ${wallet.accountNumber} belongs to a deactivated profile and cannot transact`);
    }
    if (role === 'RECEIVE' && !mayReceive(wallet.status)) {
      throw new BadRequestException(`Wallet ${wallet.accountNumber} is ${wallet.status} and cannot receive money`);
    }
    if (role === 'PAY' && !mayPay(wallet.status)) {
      throw new BadRequestException(`Wallet ${wallet.accountNumber} is ${wallet.status} and cannot be debited`);
    }
  }

  /**
   * Re-reads the wallets once the ledger holds their rows locked. A state change locks the same rows, so what is
   * read here cannot change before commit; the first check only gave an early, cheap answer.
   */
  async assertStillMay(manager: EntityManager, wallets: Array<{ wallet: MoneyWallet; role: WalletRole }>): Promise<void> {
    const current: MoneyWallet[] = await manager.query(`${SELECT_MONEY_WALLET} WHERE a.id = ANY($1)`, [wallets.map((w) => w.wallet.id)]);
    for (const { wallet, role } of wallets) {
      this.assertMay(current.find((c) => c.id === wallet.id) ?? wallet, role);
    }
  }
}
