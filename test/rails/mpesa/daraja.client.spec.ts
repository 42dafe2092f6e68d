import { readFileSync } from 'node:fs';
import { DarajaBusy, DarajaClient, DarajaDuplicate, DarajaRefused, DarajaUnknown } from '../../../src/rails/mpesa/daraja.client';
import type { RailCircuit } from '../../../src/rails/rail-health';
import { loadRailsConfig, MpesaConfig } from '../../../src/rails/rails-config';
import { DarajaStub, STUB_CREDENTIALS } from '../../support/daraja-stub';

/** A time-out no answering stub reaches, even on a loaded CI machine (the first call also fetches a token). */
const ANSWERS_WITHIN_MS = 15_000;

/** The Daraja client against the stub: tokens, STK passwords, the SecurityCredential, and how failures are classed. */
describe('Daraja client', () => {
  let stub: DarajaStub;
  let config: MpesaConfig;

  beforeAll(async () => {
    stub = await new DarajaStub().start();
    const rails = loadRailsConfig(
      { RAIL_MOBILE_MONEY: 'mpesa', ...STUB_CREDENTIALS, MPESA_BASE_URL: stub.baseUrl, MPESA_CALLBACK_BASE_URL: 'http://127.0.0.1:1' },
      'sandbox',
      'http://localhost:3000',
      (path) => readFileSync(path),
    );
    expect(rails.problems).toEqual([]);
    config = rails.mpesa!;
  });
  afterAll(async () => stub.close());
  afterEach(() => (stub.plan = () => ({})));

  const b2c = (client: DarajaClient, id: string) =>
    client.post('/mpesa/b2c/v3/paymentrequest', {
      OriginatorConversationID: id,
      InitiatorName: 'testapi',
      SecurityCredential: client.initiatorCredential(),
      CommandID: 'BusinessPayment',
      Amount: 10,
      PartyA: '600996',
      PartyB: '254712345678',
      Remarks: 'Payout',
      QueueTimeOutURL: 'http://127.0.0.1:1/t',
      ResultURL: 'http://127.0.0.1:1/r',
    });

  it('caches the token while it lives and renews it a minute before it expires (expires_in sent as a string)', async () => {
    let now = Date.parse('2026-11-25T10:00:00Z');
    const client = new DarajaClient(config, ANSWERS_WITHIN_MS, watched().circuit, () => now);
    stub.tokenSeconds = '3599';
    const before = stub.tokensIssued;
    await Promise.all([b2c(client, 'tok-1'), b2c(client, 'tok-2')]);
    expect(stub.tokensIssued - before).toBe(1);
    now += 3_545_000; // 59 min 5 s: inside the last minute of a 3,599 s token
    await b2c(client, 'tok-3');
    expect(stub.tokensIssued - before).toBe(2);
  });

  it('makes the STK password from shortcode, passkey and the Nairobi timestamp', () => {
    const client = new DarajaClient(config, ANSWERS_WITHIN_MS, watched().circuit, () => Date.parse('2026-11-25T21:30:05Z'));
    const { Password, Timestamp } = client.stkPassword();
    expect(Timestamp).toBe('20261126003005'); // UTC+3, past midnight in Nairobi
    expect(Buffer.from(Password, 'base64').toString()).toBe(`174379stub-passkey${Timestamp}`);
  });

  it('encrypts the initiator password with the certificate (the stub decrypts it with its key, PKCS#1 v1.5)', async () => {
    const client = new DarajaClient(config, ANSWERS_WITHIN_MS, watched().circuit);
    expect(client.initiatorCredential()).not.toContain(STUB_CREDENTIALS.MPESA_INITIATOR_PASSWORD);
    await expect(b2c(client, 'cred-1')).resolves.toMatchObject({ ResponseCode: '0', OriginatorConversationID: 'cred-1' });
    const wrong = new DarajaClient({ ...config, initiatorPassword: 'not-it' }, ANSWERS_WITHIN_MS, watched().circuit);
    await expect(b2c(wrong, 'cred-2')).rejects.toBeInstanceOf(DarajaRefused);
  });

  it('classes failures: busy (not taken, retry), refused (an outcome), unknown (time-out or a bare 500)', async () => {
    const { circuit, told } = watched();
    // Long enough for a loaded CI machine to answer, short enough that the 'timeout' fault ends the test soon.
    const client = new DarajaClient(config, 3000, circuit);
    await b2c(client, 'f-0');
    stub.plan = () => ({ fault: 'busy' });
    await expect(b2c(client, 'f-1')).rejects.toBeInstanceOf(DarajaBusy);
    stub.plan = () => ({ fault: 'refuse' });
    await expect(b2c(client, 'f-2')).rejects.toBeInstanceOf(DarajaRefused);
    stub.plan = () => ({ fault: 'timeout' });
    await expect(b2c(client, 'f-3')).rejects.toBeInstanceOf(DarajaUnknown);
    stub.plan = () => ({ fault: 'http500' });
    await expect(b2c(client, 'f-4')).rejects.toBeInstanceOf(DarajaUnknown);
    // "Still being processed" is about one push, not the rail.
    await expect(
      client.post('/mpesa/stkpushquery/v1/query', {
        BusinessShortCode: '174379',
        ...client.stkPassword(),
        CheckoutRequestID: 'ws_CO_none',
      }),
    ).rejects.toBeInstanceOf(DarajaBusy);
    // The circuit hears of each call (the token's first): spike arrest, time-out and a bare 500 count against M-Pesa; a refusal is an answer.
    expect(told).toEqual(['up', 'up', 'down', 'up', 'down', 'down', 'up']);
  });

  it('reads the documented error body ({requestId, errorCode, errorMessage}): a refusal keeps its code; a duplicate is neither busy nor refused', async () => {
    const client = new DarajaClient(config, ANSWERS_WITHIN_MS, watched().circuit);
    stub.plan = () => ({ fault: 'refuse' });
    const refused = await b2c(client, 'doc-1').catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(DarajaRefused);
    expect(refused).toMatchObject({ code: '400.002.02' });
    expect((refused as Error).message).toBe('Bad Request - Invalid PartyB');
    stub.plan = () => ({});
    await b2c(client, 'doc-2');
    // "Business To Customer (B2C)": the same OriginatorConversationID again is 500.002.1001, M-Pesa holding ours.
    const duplicate = await b2c(client, 'doc-2').catch((error: unknown) => error);
    expect(duplicate).toBeInstanceOf(DarajaDuplicate);
    expect(duplicate).not.toBeInstanceOf(DarajaBusy);
  });

  it('asks for a token as "Authorization" documents: GET, Basic key:secret, grant_type=client_credentials; expires_in a number or a string', async () => {
    for (const seconds of [3599, '3599']) {
      stub.tokenSeconds = seconds;
      const before = stub.tokensIssued;
      await b2c(new DarajaClient(config, ANSWERS_WITHIN_MS, watched().circuit), `token-${typeof seconds}`);
      expect(stub.tokensIssued - before).toBe(1);
    }
  });

  it('makes no call while the circuit is open, and says M-Pesa is busy', async () => {
    const { circuit, told } = watched(false);
    const calls = stub.calls.length;
    await expect(b2c(new DarajaClient(config, ANSWERS_WITHIN_MS, circuit), 'open-1')).rejects.toThrow(/circuit is open/);
    expect(stub.calls.length).toBe(calls);
    expect(told).toEqual([]);
  });

  it('a token the operator no longer accepts is renewed once; wrong consumer credentials are busy, never an outcome', async () => {
    const client = new DarajaClient(config, ANSWERS_WITHIN_MS, watched().circuit);
    await b2c(client, 'renew-1');
    // The stub forgets every token it issued, as after a key rotation on Daraja's side.
    (stub as unknown as { tokens: Set<string> }).tokens.clear();
    await expect(b2c(client, 'renew-2')).resolves.toMatchObject({ ResponseCode: '0' });
    const badKey = new DarajaClient({ ...config, consumerSecret: 'wrong' }, ANSWERS_WITHIN_MS, watched().circuit);
    await expect(b2c(badKey, 'renew-3')).rejects.toBeInstanceOf(DarajaBusy);
  });
});

/** A circuit that keeps what the client told it of each call ('up' or 'down'), and admits calls or not. */
function watched(admits = true): { circuit: RailCircuit; told: string[] } {
  const told: string[] = [];
  return {
    told,
    circuit: { admits: async () => admits, succeeded: async () => void told.push('up'), failed: async () => void told.push('down') },
  };
}

describe('rails configuration', () => {
  const read = () => Buffer.from('certificate');

  it('defaults every rail to its simulator in sandbox and to the real operator in production', () => {
    expect(loadRailsConfig({}, 'sandbox', 'http://localhost:3000', read)).toMatchObject({
      mobileMoney: 'sandbox',
      bank: 'sandbox',
      airtime: 'sandbox',
      fx: 'sandbox',
      problems: [],
    });
    const production = loadRailsConfig({}, 'production', 'https://pay.example.com', read);
    expect(production).toMatchObject({ mobileMoney: 'mpesa', bank: 'jenga', airtime: 'africastalking', fx: 'openexchangerates' });
    expect(production.problems.join()).toMatch(/MPESA_CONSUMER_KEY/);
  });

  it('takes Safaricom’s published addresses as the callback allow-list unless told otherwise', () => {
    const rails = loadRailsConfig({ RAIL_MOBILE_MONEY: 'mpesa', ...STUB_CREDENTIALS }, 'sandbox', 'http://localhost:3000', read);
    expect(rails.mpesa!.allowedAddresses).toContain('196.201.214.200');
    expect(rails.mpesa!.baseUrl).toBe('https://api.safaricom.co.ke');
    expect(rails.mpesa!.callbackBaseUrl).toBe('http://localhost:3000');
  });

  it('names a rail value that is neither the operator nor sandbox, and an unreadable certificate', () => {
    const rails = loadRailsConfig(
      { RAIL_MOBILE_MONEY: 'mtn', RAIL_BANK: 'sandbox', ...STUB_CREDENTIALS },
      'sandbox',
      'http://localhost:3000',
      () => {
        throw new Error('ENOENT');
      },
    );
    expect(rails.problems).toEqual(['RAIL_MOBILE_MONEY must be mpesa or sandbox']);
    const unreadable = loadRailsConfig({ RAIL_MOBILE_MONEY: 'mpesa', ...STUB_CREDENTIALS }, 'sandbox', 'http://x', () => {
      throw new Error('ENOENT');
    });
    expect(unreadable.problems.join()).toMatch(/MPESA_CERTIFICATE_PATH cannot be read/);
  });

  it('opens a circuit after 5 failures for 30 s unless told otherwise, and names bad circuit settings', () => {
    expect(loadRailsConfig({}, 'sandbox', 'http://x', read).circuit).toEqual({ failures: 5, cooldownMs: 30000 });
    expect(loadRailsConfig({ RAIL_CIRCUIT_FAILURES: '0', RAIL_CIRCUIT_COOLDOWN_MS: '5s' }, 'sandbox', 'http://x', read).problems).toEqual([
      'RAIL_CIRCUIT_FAILURES must be a whole number from 1 to 999',
      'RAIL_CIRCUIT_COOLDOWN_MS must be a whole number of milliseconds, at least 100',
    ]);
  });
});
