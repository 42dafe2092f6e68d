import { BadRequestException, ConflictException, Injectable, NotFoundException } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { WalletPrincipal } from '../auth/principal';
import { Money } from '../common/money';
import { LedgerAccount } from '../ledger/ledger-account';
import { LedgerService } from '../ledger/ledger.service';
import { Profile } from './profile.entity';
import { profileFields } from './profile.presenter';
import { AccountType } from './account-type.entity';
import { CreateWalletDto } from './wallet.dto';
import { Wallet } from './wallet.entity';
import { walletRecord, walletSummary } from './wallet.presenter';
import { canTransition, COMMAND_TARGET, WalletCommand } from './wallet-state-machine';

const LEDGER_COLUMNS = `a.account_number AS "accountNumber", a.currency, a.balance, a.minimum_balance AS "minimumBalance",
  a.can_overdraw AS "canOverdraw", a.kind, a.client_id AS "clientId", a.id`;

@Injectable()
export class WalletsService {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly ledger: LedgerService,
  ) {}

  async create(principal: WalletPrincipal, dto: CreateWalletDto) {
    return this.db.transaction(async (manager) => {
      const profile = await manager.findOneBy(Profile, { clientId: principal.clientId, clientProfileId: dto.client_profile_id });
      if (!profile) throw new NotFoundException('Profile not found');
      if (profile.isActive !== 1) throw new BadRequestException('Profile is inactive');
      const type = await manager.findOneBy(AccountType, { clientId: principal.clientId, code: dto.account_type_code });
      if (!type) throw new NotFoundException('Account type not found');
      if (type.isActive !== 1) throw new BadRequestException('Account type is inactive');

      const account = await this.ledger.openWalletAccount(manager, {
        clientId: principal.clientId,
        currency: dto.currency,
        minimumBalance: new Money(dto.minimum_balance),
        canOverdraw: dto.can_overdraw,
      });
      const wallet = manager.create(Wallet, {
        id: account.id,
        clientId: principal.clientId,
        profileId: profile.id,
        accountTypeId: type.id,
        accountName: dto.account_name,
        status: dto.status,
        statusDescription: dto.status_description ?? null,
      });
      await manager.insert(Wallet, wallet);
      return walletRecord(await manager.findOneByOrFail(Wallet, { id: wallet.id }), account);
    });
  }

  async fetch(principal: WalletPrincipal, accountNumber: string) {
    const { wallet, account } = await this.findOwned(this.db.manager, principal, accountNumber);
    const profile = await this.db.manager.findOneBy(Profile, { id: wallet.profileId });
    const [client] = await this.db.query('SELECT id, code, name FROM clients WHERE id = $1', [principal.clientId]);
    return {
      ...walletSummary(wallet, account),
      profile: profile ? profileFields(profile, client) : null,
      client: { client_id: client.id, client_name: client.name, client_code: client.code },
    };
  }

  async applyCommand(principal: WalletPrincipal, accountNumber: string, command: WalletCommand) {
    return this.db.transaction(async (manager) => {
      // Locks in the order money movements take them: the wallet row (they share-lock it, so this waits for any
      // in flight), then its ledger row (every posting locks it), so no money moves while the state changes.
      await manager.query(
        `SELECT 1 FROM wallets w JOIN ledger_accounts a ON a.client_id = w.client_id AND a.id = w.id
         WHERE a.client_id = $1 AND a.account_number = $2 FOR UPDATE OF w`,
        [principal.clientId, accountNumber],
      );
      const { wallet, account } = await this.findOwned(manager, principal, accountNumber, true);
      const target = COMMAND_TARGET[command];
      if (!canTransition(wallet.status, target)) {
        throw new ConflictException(`Wallet cannot move from ${wallet.status} to ${target}`);
      }
      if (target === 'CLOSED' && wallet.status !== 'CLOSED' && !new Money(account.balance).isZero()) {
        throw new ConflictException('Wallet balance must be zero to close it');
      }
      if (wallet.status !== target) {
        await manager.update(Wallet, { id: wallet.id }, { status: target });
      }
      return { account_number: account.accountNumber, status: target, message: `Wallet status is ${target}` };
    });
  }

  async summariesOfProfile(profileId: string) {
    const wallets = await this.db.manager.find(Wallet, { where: { profileId }, order: { createdAt: 'ASC' } });
    if (wallets.length === 0) return [];
    const accounts: LedgerAccount[] = await this.db.query(`SELECT ${LEDGER_COLUMNS} FROM ledger_accounts a WHERE a.id = ANY($1)`, [
      wallets.map((w) => w.id),
    ]);
    const byId = new Map(accounts.map((a) => [a.id, a]));
    return wallets.map((w) => walletSummary(w, byId.get(w.id)!));
  }

  /** Another client's wallet is reported exactly as a missing one. */
  async findOwned(manager: EntityManager, principal: WalletPrincipal, accountNumber: string, lock = false) {
    const [account]: LedgerAccount[] = await manager.query(
      `SELECT ${LEDGER_COLUMNS} FROM ledger_accounts a
       WHERE a.client_id = $1 AND a.account_number = $2 AND a.kind = 'WALLET' ${lock ? 'FOR UPDATE' : ''}`,
      [principal.clientId, accountNumber],
    );
    if (!account) throw new NotFoundException('Wallet not found');
    const wallet = await manager.findOneByOrFail(Wallet, { id: account.id });
    return { wallet, account };
  }
}
