import {
  AfricasTalkingBusy,
  AfricasTalkingClient,
  AfricasTalkingRefused,
  AfricasTalkingUnknown,
} from '../../../src/rails/africastalking/africastalking.client';
import type { RailCircuit } from '../../../src/rails/rail-health';
import { AfricasTalkingStub, DOCUMENTED } from '../../support/africastalking-stub';

/** The circuit is another test's subject: here every call is made. */
const open: RailCircuit = { admits: async () => true, succeeded: async () => undefined, failed: async () => undefined };

/**
 * Issue 29: every Africa's Talking call as its documentation writes it (fixtures in africastalking-fixtures.ts name
 * the pages): what our client sends, read from the wire, and how it reads each documented answer, given verbatim.
 */
describe("Africa's Talking calls as documented", () => {
  let stub: AfricasTalkingStub;
  let client: AfricasTalkingClient;

  beforeAll(async () => {
    stub = await new AfricasTalkingStub().start();
    client = new AfricasTalkingClient(
      {
        baseUrl: stub.baseUrl,
        username: AfricasTalkingStub.CREDENTIALS.AFRICASTALKING_USERNAME,
        apiKey: AfricasTalkingStub.CREDENTIALS.AFRICASTALKING_API_KEY,
        timeoutMs: 2000,
      },
      open,
    );
  });
  afterAll(() => stub?.close());

  const lastRequest = () => stub.received.at(-1)!;

  it('airtime send (docs.africastalking.com/airtime/sending): form body, apiKey, Accept, Idempotency-Key; the answer per number', async () => {
    stub.scripted.push({ path: '/version1/airtime/send', status: 201, body: DOCUMENTED.sendAnswer });
    const answer = await client.sendAirtime([{ phoneNumber: '+254711XXXYYY', amount: 'KES 1000' }], 'call-key-1');

    const sent = lastRequest();
    expect([sent.method, sent.path]).toEqual(['POST', '/version1/airtime/send']);
    expect(sent.headers).toMatchObject({
      apikey: AfricasTalkingStub.CREDENTIALS.AFRICASTALKING_API_KEY,
      accept: 'application/json',
      'content-type': 'application/x-www-form-urlencoded',
      'idempotency-key': 'call-key-1',
    });
    expect(Object.keys(sent.fields).sort()).toEqual(['recipients', 'username']);
    expect(sent.fields.username).toBe(AfricasTalkingStub.CREDENTIALS.AFRICASTALKING_USERNAME);
    // The documented recipients string: a JSON list of {phoneNumber, amount}, both strings.
    const documented = JSON.parse(DOCUMENTED.sendRecipients) as Record<string, string>[];
    const ours = JSON.parse(sent.fields.recipients) as Record<string, string>[];
    expect(ours.map((r) => Object.keys(r).sort())).toEqual(documented.map((r) => Object.keys(r).sort()));
    expect(ours).toEqual([{ phoneNumber: '+254711XXXYYY', amount: 'KES 1000' }]);

    expect(answer).toEqual({
      errorMessage: null,
      responses: [
        { phoneNumber: '+254711XXXYYY', status: 'Sent', requestId: 'ATQid_1be914ac47845eef1a1dab5d89ec50ff', errorMessage: null },
      ],
    });
  });

  it('airtime send: a number refused at send has requestId "None", which is no id', async () => {
    stub.scripted.push({
      path: '/version1/airtime/send',
      status: 201,
      body: { ...DOCUMENTED.sendAnswer, numSent: 0, responses: [DOCUMENTED.sendRefusedNumber] },
    });
    const answer = await client.sendAirtime([{ phoneNumber: '+254711XXXYYY', amount: 'KES 1000' }], 'call-key-2');
    expect(answer.responses).toEqual([
      { phoneNumber: '+254711XXXYYY', status: 'Failed', requestId: null, errorMessage: 'Invalid phone number' },
    ]);
  });

  it('airtime send: a repeated Idempotency-Key within its window is answered as a duplicate, naming no number', async () => {
    stub.scripted.push({ path: '/version1/airtime/send', status: 201, body: DOCUMENTED.sendDuplicate });
    expect(await client.sendAirtime([{ phoneNumber: '+254711XXXYYY', amount: 'KES 1000' }], 'call-key-1')).toEqual({
      errorMessage: 'A duplicate request was received within the last 5 minutes',
      responses: [],
    });
  });

  it('airtime send: 401 is not taken (busy), a 4xx with its reason a refusal, a 500 a lost answer', async () => {
    const send = () => client.sendAirtime([{ phoneNumber: '+254711XXXYYY', amount: 'KES 1000' }], 'call-key-3');
    stub.scripted.push({ path: '/version1/airtime/send', status: 401, body: 'The supplied authentication is invalid' });
    await expect(send()).rejects.toBeInstanceOf(AfricasTalkingBusy);
    stub.scripted.push({ path: '/version1/airtime/send', status: 400, body: 'Invalid amount' });
    await expect(send()).rejects.toThrow(new AfricasTalkingRefused('Invalid amount'));
    stub.scripted.push({ path: '/version1/airtime/send', status: 500, body: 'Internal Server Error' });
    await expect(send()).rejects.toBeInstanceOf(AfricasTalkingUnknown);
  });

  it('query/transaction/find (docs.africastalking.com/query/findtransaction): username and transactionId; the transaction read', async () => {
    stub.scripted.push({ path: '/query/transaction/find', status: 200, body: DOCUMENTED.findAnswer });
    const found = await client.findTransaction('ATQid_SampleTxnId123');

    const asked = lastRequest();
    expect([asked.method, asked.path]).toEqual(['GET', '/query/transaction/find']);
    expect(asked.headers).toMatchObject({ apikey: AfricasTalkingStub.CREDENTIALS.AFRICASTALKING_API_KEY, accept: 'application/json' });
    expect(asked.fields).toEqual({
      username: AfricasTalkingStub.CREDENTIALS.AFRICASTALKING_USERNAME,
      transactionId: 'ATQid_SampleTxnId123',
    });
    expect(found).toEqual({
      queryStatus: 'Success',
      status: 'Success',
      description: 'Airtime Delivered Successfully',
      destination: '+254711XXXYYY',
      value: 'KES 100.0000',
      transactionDate: DOCUMENTED.findAnswer.data.transactionDate,
      answer: DOCUMENTED.findAnswer,
    });

    stub.scripted.push({ path: '/query/transaction/find', status: 200, body: DOCUMENTED.findNotFound });
    expect(await client.findTransaction('ATQid_unknown')).toEqual({
      queryStatus: 'Failed',
      status: null,
      description: 'Could not find transaction',
      destination: null,
      value: null,
      transactionDate: null,
      answer: DOCUMENTED.findNotFound,
    });
  });
});
