import Decimal from 'decimal.js';
import { AfricasTalkingClient } from '../../../src/rails/africastalking/africastalking.client';
import { AfricasTalkingStatement } from '../../../src/rails/africastalking/africastalking-statement';
import type { OurMovement } from '../../../src/rails/operator-statement';
import type { RailCircuit } from '../../../src/rails/rail-health';
import { loadRailsConfig } from '../../../src/rails/rails-config';
import { AfricasTalkingStub } from '../../support/africastalking-stub';

const closedCircuit: RailCircuit = { admits: async () => true, succeeded: async () => undefined, failed: async () => undefined };

/** Issue 33: Africa's Talking confirms each top-up of ours by query/transaction/find, and reports the application balance. */
describe("Africa's Talking operator statement (stub)", () => {
  let stub: AfricasTalkingStub;
  let statement: AfricasTalkingStatement;
  const ours = (requestId: string | null, amount = '100'): OurMovement => ({
    kind: 'AIRTIME',
    recordId: `r-${requestId}`,
    clientId: '1',
    ourReference: `r-${requestId}`,
    operatorReference: requestId,
    counterparty: '+254711000111',
    amount: new Decimal(amount),
    currency: 'KES',
    direction: 'OUT',
    status: 'SUCCEEDED',
    at: new Date(),
  });

  beforeAll(async () => {
    stub = await new AfricasTalkingStub().start();
    const config = loadRailsConfig(stub.env(), 'sandbox', 'http://localhost:3000', () => Buffer.alloc(0)).africastalking!;
    statement = new AfricasTalkingStatement(new AfricasTalkingClient({ ...config, timeoutMs: 1000 }, closedCircuit));
  });
  afterAll(async () => stub.close());

  it('asks about each top-up it gave an id, as documented, and reports what it holds with exact values', async () => {
    stub.topUps.push({
      requestId: 'ATQid_found',
      phoneNumber: '+254711000111',
      amount: 'KES 100.5000',
      sent: 'Sent',
      final: 'Success',
      finalAt: 0,
      plan: {},
      idempotencyKey: 'k',
      call: 0,
    });
    const before = stub.received.length;
    const movements = await statement.movements({ from: new Date(0), to: new Date() }, [
      ours('ATQid_found'),
      ours('ATQid_unknown'),
      ours(null),
    ]);
    const finds = stub.received.slice(before).filter((r) => r.path === '/query/transaction/find');
    expect(finds.map((f) => f.fields)).toEqual([
      { username: AfricasTalkingStub.CREDENTIALS.AFRICASTALKING_USERNAME, transactionId: 'ATQid_found' },
      { username: AfricasTalkingStub.CREDENTIALS.AFRICASTALKING_USERNAME, transactionId: 'ATQid_unknown' },
    ]);
    expect(movements).toHaveLength(1);
    expect(movements[0]).toMatchObject({ operatorReference: 'ATQid_found', status: 'SUCCEEDED', currency: 'KES', direction: 'OUT' });
    expect(movements[0].amount.toFixed()).toBe('100.5');
  });

  it('fails the listing when a find errs', async () => {
    stub.scripted.push({ path: '/query/transaction/find', status: 500, body: 'Internal Server Error' });
    await expect(statement.movements({ from: new Date(0), to: new Date() }, [ours('ATQid_found')])).rejects.toThrow(/HTTP 500/);
  });

  it('reports the application balance exactly', async () => {
    stub.balance = 'KES 1785.51';
    const balance = await statement.balance();
    expect([balance.amount.toFixed(), balance.currency]).toEqual(['1785.51', 'KES']);
  });
});
