import { readFileSync } from 'node:fs';
import { JengaClient, JengaSendWindowPassed } from '../../../src/rails/jenga/jenga.client';
import type { RailCircuit } from '../../../src/rails/rail-health';
import { JengaConfig, loadRailsConfig } from '../../../src/rails/rails-config';
import { JENGA_PATHS, JengaStub } from '../../support/jenga-stub';

const closedCircuit: RailCircuit = { admits: async () => true, succeeded: async () => undefined, failed: async () => undefined };

const transfer = {
  source: { countryCode: 'KE', name: 'Paygate Ltd', accountNumber: JengaStub.CREDENTIALS.JENGA_SOURCE_ACCOUNT_NUMBER },
  destination: { type: 'bank', countryCode: 'KE', name: 'Jane Doe', bankCode: '01', accountNumber: '01100975259001' },
  transfer: {
    type: 'PesaLink',
    amount: '1500.00',
    currencyCode: 'KES',
    reference: '000000000777',
    date: '2026-11-27',
    description: 'Salary',
  },
};

/**
 * A send's window: reconciliation reads Jenga's "not found" as "not taken" once a send's window and time-out are
 * over, so a send whose process stalled past its window must never leave afterwards (it would land after the send
 * again: a transfer paid twice).
 */
describe('Jenga client: a send past its window', () => {
  let stub: JengaStub;
  let config: JengaConfig;
  let clock: number;
  let client: JengaClient;

  beforeAll(async () => {
    stub = await new JengaStub().start();
    const rails = loadRailsConfig(stub.env(), 'sandbox', 'http://localhost:3000', (path) => readFileSync(path));
    expect(rails.problems).toEqual([]);
    config = rails.jenga!;
  });
  afterAll(async () => stub.close());
  beforeEach(() => {
    clock = Date.now();
    client = new JengaClient(config, 15_000, closedCircuit, () => clock);
  });

  const signed = () => client.signature(['1500.00', 'KES', '000000000777', 'Jane Doe', transfer.source.accountNumber]);
  const sends = () => stub.calls.filter((call) => call.path === JENGA_PATHS.pesalink).length;

  it('leaves within its window', async () => {
    const before = sends();
    const answer = await client.call('POST', JENGA_PATHS.pesalink, transfer, signed(), clock + 1);
    expect(answer).toMatchObject({ status: true });
    expect(sends()).toBe(before + 1);
  });

  it('is not sent once its window closed while it waited (for its token, say), and says so', async () => {
    const before = sends();
    await expect(client.call('POST', JENGA_PATHS.pesalink, transfer, signed(), clock - 1)).rejects.toBeInstanceOf(JengaSendWindowPassed);
    expect(sends()).toBe(before);
  });
});
