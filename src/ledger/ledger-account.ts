export const SYSTEM_ACCOUNT_KINDS = [
  'FEE_INCOME',
  'SETTLEMENT',
  'FX_POSITION',
  'IN_FLIGHT_MOBILE_MONEY',
  'IN_FLIGHT_BANK',
  'IN_FLIGHT_AIRTIME',
] as const;
export type SystemAccountKind = (typeof SYSTEM_ACCOUNT_KINDS)[number];
export type LedgerAccountKind = 'WALLET' | SystemAccountKind;

export interface LedgerAccount {
  id: string;
  clientId: string;
  accountNumber: string;
  kind: LedgerAccountKind;
  currency: string;
  balance: string;
  minimumBalance: string;
  canOverdraw: boolean;
}
