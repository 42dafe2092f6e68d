import { WALLET_STATUSES, WalletStatus } from '../../src/wallets/wallet.entity';
import { canTransition, COMMAND_TARGET, MoneyRole, statesThatMay, WALLET_COMMANDS } from '../../src/wallets/wallet-state-machine';

/** The wallet states of the provider contract §4, written out here as the contract states them; pure, no database. */
const CONTRACT_TRANSITIONS: Array<[WalletStatus, WalletStatus]> = [
  ['PRE_ACTIVE', 'ACTIVE'],
  ['PRE_ACTIVE', 'CLOSED'],
  ['ACTIVE', 'DORMANT'],
  ['ACTIVE', 'SUSPENDED'],
  ['ACTIVE', 'CLOSED'],
  ['DORMANT', 'ACTIVE'],
  ['DORMANT', 'SUSPENDED'],
  ['DORMANT', 'CLOSED'],
  ['SUSPENDED', 'ACTIVE'],
  ['SUSPENDED', 'CLOSED'],
];
const allowed = new Set(CONTRACT_TRANSITIONS.map(([from, to]) => `${from}→${to}`));
const pairs = WALLET_STATUSES.flatMap((from) => WALLET_STATUSES.filter((to) => to !== from).map((to) => [from, to] as const));

describe('wallet state machine', () => {
  it.each(CONTRACT_TRANSITIONS)('%s → %s is allowed', (from, to) => {
    expect(canTransition(from, to)).toBe(true);
  });

  it.each(pairs.filter(([from, to]) => !allowed.has(`${from}→${to}`)))('%s → %s is refused', (from, to) => {
    expect(canTransition(from, to)).toBe(false);
  });

  it('covers every pair of distinct states: 10 allowed, 10 refused', () => {
    expect(pairs).toHaveLength(20);
    expect(pairs.filter(([from, to]) => canTransition(from, to))).toHaveLength(10);
  });

  it.each(WALLET_STATUSES)('a command to the current state (%s) is a no-op, CLOSED included', (status) => {
    expect(canTransition(status, status)).toBe(true);
  });

  it('CLOSED is final', () => {
    expect(WALLET_STATUSES.filter((to) => to !== 'CLOSED' && canTransition('CLOSED', to))).toEqual([]);
  });

  it('maps each command to its state', () => {
    expect(Object.fromEntries(WALLET_COMMANDS.map((c) => [c, COMMAND_TARGET[c]]))).toEqual({
      ACTIVATE: 'ACTIVE',
      DORMANT: 'DORMANT',
      SUSPEND: 'SUSPENDED',
      CLOSE: 'CLOSED',
    });
  });
});

describe('which wallets may move money (contract §4)', () => {
  const MAY: Record<WalletStatus, MoneyRole[]> = {
    PRE_ACTIVE: [],
    ACTIVE: ['PAY', 'RECEIVE'],
    DORMANT: ['RECEIVE'],
    SUSPENDED: [],
    CLOSED: [],
  };

  it.each(['PAY', 'RECEIVE'] as const)('the states that may %s', (role) => {
    expect(statesThatMay(role)).toEqual(WALLET_STATUSES.filter((status) => MAY[status].includes(role)));
  });
});
