import { formatAmount } from '../common/money';
import { LedgerAccount } from '../ledger/ledger-account';
import { AccountType } from './account-type.entity';
import { Wallet } from './wallet.entity';

export function accountTypeRecord(type: AccountType) {
  return {
    account_type_id: type.id,
    account_type_code: type.code,
    account_type_name: type.name,
    account_type_description: type.description,
    is_active: type.isActive,
    created_at: type.createdAt.toISOString(),
    updated_at: type.updatedAt.toISOString(),
  };
}

export function accountTypeListRecord(type: AccountType, clientCode: string) {
  return {
    ...accountTypeRecord(type),
    is_mandatory_account: type.isMandatoryAccount,
    is_default: type.isDefault,
    client: { client_id: type.clientId, client_code: clientCode },
  };
}

export function walletRecord(
  wallet: Wallet,
  account: Pick<LedgerAccount, 'accountNumber' | 'currency' | 'minimumBalance' | 'canOverdraw'>,
) {
  return {
    account_id: wallet.id,
    account_number: account.accountNumber,
    account_name: wallet.accountName,
    currency: account.currency,
    minimum_balance: formatAmount(account.minimumBalance),
    can_overdraw: account.canOverdraw,
    status: wallet.status,
    status_description: wallet.statusDescription,
    created_at: wallet.createdAt.toISOString(),
    updated_at: wallet.updatedAt.toISOString(),
  };
}

/** A wallet as listed under its profile: the record plus its ledger balance. */
export function walletSummary(wallet: Wallet, account: LedgerAccount) {
  return { ...walletRecord(wallet, account), current_balance: formatAmount(account.balance) };
}
