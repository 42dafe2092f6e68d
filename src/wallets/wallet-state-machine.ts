import { WalletStatus } from './wallet.entity';

export const WALLET_COMMANDS = ['CLOSE', 'ACTIVATE', 'DORMANT', 'SUSPEND'] as const;
export type WalletCommand = (typeof WALLET_COMMANDS)[number];

export const COMMAND_TARGET: Record<WalletCommand, WalletStatus> = {
  ACTIVATE: 'ACTIVE',
  DORMANT: 'DORMANT',
  SUSPEND: 'SUSPENDED',
  CLOSE: 'CLOSED',
};

/** Provider contract §4. A command to the current state is a no-op and is not listed here. */
const ALLOWED: Record<WalletStatus, readonly WalletStatus[]> = {
  PRE_ACTIVE: ['ACTIVE', 'CLOSED'],
  ACTIVE: ['DORMANT', 'SUSPENDED', 'CLOSED'],
  DORMANT: ['ACTIVE', 'SUSPENDED', 'CLOSED'],
  SUSPENDED: ['ACTIVE', 'CLOSED'],
  CLOSED: [],
};

export function canTransition(from: WalletStatus, to: WalletStatus): boolean {
  return from === to || ALLOWED[from].includes(to);
}

/** The side a wallet takes in a money movement: PAY is debited, RECEIVE is credited. */
export type MoneyRole = 'PAY' | 'RECEIVE';

/** Provider contract §4: ACTIVE pays and receives, DORMANT only receives, the other states neither. */
const MONEY_ROLES: Record<WalletStatus, readonly MoneyRole[]> = {
  PRE_ACTIVE: [],
  ACTIVE: ['PAY', 'RECEIVE'],
  DORMANT: ['RECEIVE'],
  SUSPENDED: [],
  CLOSED: [],
};

export type MoneyRefusal = 'PROFILE_DEACTIVATED' | 'WALLET_STATE';

/**
 * Why a wallet may not take `role` in a money movement, or null when it may (provider contract §4): a wallet whose
 * profile is deactivated cannot transact at all, otherwise its state decides. The money functions in the database
 * (wallet_money_batch, wallet_fund) apply this rule in this order, given the states by `statesThatMay`.
 */
export function moneyRefusal(wallet: { status: WalletStatus; profileActive: boolean }, role: MoneyRole): MoneyRefusal | null {
  if (!wallet.profileActive) return 'PROFILE_DEACTIVATED';
  return MONEY_ROLES[wallet.status].includes(role) ? null : 'WALLET_STATE';
}

/** The wallet states that may take `role`: the money path in the database is given these, so the rule stays here. */
export function statesThatMay(role: MoneyRole): WalletStatus[] {
  return (Object.keys(MONEY_ROLES) as WalletStatus[]).filter((status) => MONEY_ROLES[status].includes(role));
}

/** The state half of `moneyRefusal`, for callers that check the profile separately (split settlements, to be merged). */
export function mayReceive(status: WalletStatus): boolean {
  return MONEY_ROLES[status].includes('RECEIVE');
}

export function mayPay(status: WalletStatus): boolean {
  return MONEY_ROLES[status].includes('PAY');
}
