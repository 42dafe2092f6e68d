import Decimal from 'decimal.js';
import type { OurMovement } from '../../src/rails/operator-statement';
import { SandboxStatement } from '../../src/rails/sandbox-statement';

/** Issue 33: the sandbox rails answer what they simulated, decided by the number as every sandbox outcome is. */
describe('sandbox operator statement', () => {
  const ours = (counterparty: string, operatorReference: string | null): OurMovement => ({
    kind: 'CHARGE',
    recordId: counterparty,
    clientId: '1',
    ourReference: `P${counterparty}`,
    operatorReference,
    counterparty,
    amount: new Decimal('100.01'),
    currency: 'KES',
    direction: 'IN',
    status: 'PENDING',
    at: new Date('2026-11-26T10:00:00Z'),
  });

  it('reports success, failure and silence by the test numbers, with the receipt it printed or a stable one', async () => {
    const statement = new SandboxStatement('mpesa', null);
    const list = [
      ours('254711000222', 'SBX123'),
      ours('254700000001', null),
      ours('254700000002', null),
      ours('254700000003', null),
      ours('254711000333', null),
    ];
    const first = await statement.movements({ from: new Date(0), to: new Date() }, list);
    expect(first.map((m) => m.status)).toEqual(['SUCCEEDED', 'FAILED', 'PENDING', 'PENDING', 'SUCCEEDED']);
    expect(first[0].operatorReference).toBe('SBX123');
    expect(first[0].amount.toFixed()).toBe('100.01');
    const again = await statement.movements({ from: new Date(0), to: new Date() }, list);
    expect(again[4].operatorReference).toBe(first[4].operatorReference);
    expect(first[4].operatorReference).not.toBe(first[1].operatorReference);
  });

  it('reports a balance only through what derives it', async () => {
    await expect(new SandboxStatement('jenga', null).balance()).rejects.toThrow(/keeps no float/);
    const balance = { amount: new Decimal('5'), currency: 'KES', at: new Date(), evidence: {} };
    await expect(new SandboxStatement('jenga', async () => balance).balance()).resolves.toBe(balance);
  });
});
