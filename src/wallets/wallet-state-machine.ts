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

/** Which wallets may move money, and in which direction. */
export function mayReceive(status: WalletStatus): boolean {
  return status === 'ACTIVE' || status === 'DORMANT';
}

export function mayPay(status: WalletStatus): boolean {
  return status === 'ACTIVE';
}
