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

/**
 * The wallet states that may take `role` (provider contract §4): the database's money functions (wallet_money_batch,
 * wallet_fund, split_acknowledge, and payouts and airtime through paying_service) are given these, so the rule has
 * this one home. A wallet of a deactivated profile cannot transact whatever its state, which they check as well.
 */
export function statesThatMay(role: MoneyRole): WalletStatus[] {
  return (Object.keys(MONEY_ROLES) as WalletStatus[]).filter((status) => MONEY_ROLES[status].includes(role));
}
