import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { AfricasTalkingStub } from './africastalking-stub';
import { freePort, IsolatedSandbox, startIsolatedSandbox } from './gateway-fixtures';
import { dataSource } from './test-app';

/** An isolated server whose airtime rail is Africa's Talking, against the stub, listening where the stub calls back. */
export interface AfricasTalkingSandbox extends IsolatedSandbox {
  stub: AfricasTalkingStub;
}

export async function startAfricasTalkingSandbox(
  env: Record<string, string> = {},
  create?: Parameters<typeof startIsolatedSandbox>[2],
  stubs: { close(): Promise<void> }[] = [],
): Promise<AfricasTalkingSandbox> {
  const stub = await new AfricasTalkingStub().start();
  const port = await freePort();
  // Stubs close at once and together (cutting what is under way), so nothing they do outlives the test.
  const closeStubs = () => Promise.all([stub, ...stubs].map((s) => s.close())).then(() => undefined);
  const sandbox = await startIsolatedSandbox(
    {
      ...stub.env(),
      AFRICASTALKING_TIMEOUT_MS: '1000',
      RAIL_RECONCILE_AFTER_MS: '1000',
      PAYOUT_RECONCILE_AFTER_MS: '1000',
      CALLBACK_RETRY_DELAYS_MS: '300,600,900',
      ...env,
    },
    'sandbox',
    create,
  ).catch(async (error) => {
    await closeStubs();
    throw error;
  });
  await sandbox.app.listen({ port, host: '127.0.0.1' });
  stub.statusCallbackUrl = `http://127.0.0.1:${port}/rails/africastalking/airtime/status`;
  return {
    ...sandbox,
    stub,
    /** The stubs first, so that calls and callbacks in flight end at once, then the server. */
    async close() {
      try {
        await closeStubs();
      } finally {
        await sandbox.close();
      }
    },
  };
}

/** Each recipient of a request, in order: its status, its hold's, how many entries resolved the hold, its rail request. */
export async function airtimeRecipients(app: NestFastifyApplication, reference: string) {
  return dataSource(app).query(
    `SELECT r.id, r.phone_number, r.service_status, r.provider_reference, h.status AS hold,
            (SELECT count(*)::int FROM journal_entries e WHERE e.id = h.outcome_entry_id) AS outcome_entries,
            rr.id AS rail_request_id, rr.state AS rail_state, rr.outcome AS rail_outcome, rr.operator_request_id
     FROM airtime_recipients r JOIN airtime_requests q ON q.client_id = r.client_id AND q.id = r.request_id JOIN float_holds h ON h.client_id = r.client_id AND h.id = r.hold_id
     LEFT JOIN rail_requests rr ON rr.subject_kind = 'AIRTIME' AND rr.subject_id = r.id::text
     WHERE q.reference = $1 ORDER BY r.position`,
    [reference],
  ) as Promise<Array<Record<string, any>>>;
}

/** The effects of the status callbacks kept about a top-up Africa's Talking knows by this requestId, in arrival order. */
export async function statusCallbackEffects(app: NestFastifyApplication, requestId: string): Promise<string[]> {
  const rows = await dataSource(app).query(
    `SELECT effect, received_at FROM rail_callbacks WHERE rail = 'africastalking' AND payload->>'requestId' = $1
     UNION ALL
     SELECT 'UNMATCHED', received_at FROM unmatched_rail_callbacks WHERE rail = 'africastalking' AND payload->>'requestId' = $1
     ORDER BY received_at`,
    [requestId],
  );
  return rows.map((row: { effect: string }) => row.effect);
}
