import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { OutboxService } from '../infra/queue/outbox.service';
import { settlePaymentJob, Topic, TOPICS } from '../infra/queue/queues';

export type SubjectKind = 'PAYMENT' | 'PAYOUT' | 'REVERSAL' | 'AIRTIME';
export type RailOutcome = 'SUCCEEDED' | 'FAILED' | 'JAMMED';

/** What a request is about: a record of a client, whose client the request records too. */
export interface RailSubject {
  kind: SubjectKind;
  id: string;
  clientId: string;
}

export interface RailRequestRow {
  id: string;
  client_id: string;
  rail: string;
  operation: string;
  subject_kind: SubjectKind;
  subject_id: string;
  amount: string;
  request: { path: string; body: Record<string, unknown> };
  state: 'SENDING' | 'SENT' | 'BUSY' | 'UNKNOWN' | 'ANSWERED';
  operator_request_id: string | null;
  operator_conversation_id: string | null;
  outcome: RailOutcome | null;
  result_code: string | null;
  result_description: string | null;
  receipt: string | null;
  queries: number;
  next_query_at: Date;
  created_at: Date;
  sent_at: Date | null;
  answered_at: Date | null;
}

/** A request as the statements about it name it: by its id, on its client's shard. */
export type RailRequestKey = Pick<RailRequestRow, 'id' | 'client_id'>;

/** A real operator's adapter as reconciliation sees it: its rail name, and one step for a request without an answer. */
export interface ReconcilingGateway {
  readonly rail: string;
  reconcile(request: RailRequestRow): Promise<void>;
}

/** An operator's answer about one request. */
export interface RailAnswer {
  outcome: RailOutcome;
  resultCode: string | null;
  description: string;
  receipt: string | null;
}

/** The job that takes a subject's new answer through its own domain's path (settlement, payout result, reversal). */
const FOLLOW_UP: Record<SubjectKind, { topic: Topic; payload: (id: string) => Record<string, string> }> = {
  PAYMENT: { topic: TOPICS.settlePayment, payload: settlePaymentJob },
  PAYOUT: { topic: TOPICS.recheckPayout, payload: (id) => ({ payoutId: id }) },
  REVERSAL: { topic: TOPICS.processReversal, payload: (id) => ({ reversalId: id }) },
  AIRTIME: { topic: TOPICS.recheckAirtime, payload: (id) => ({ recipientId: id }) },
};

/**
 * Every request made to a real operator, and its answer. Rails write here; domains never do: they learn an answer
 * through the follow-up job queued in the answer's own transaction.
 */
@Injectable()
export class RailRequestsRepository {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly outbox: OutboxService,
  ) {}

  /**
   * The request about this subject, created (state SENDING) when there is none. `created` says whether this call
   * made it: only the maker may send it; anyone else finds its fate in the row.
   */
  async open(
    rail: string,
    operation: string,
    subject: RailSubject,
    amount: string,
    request: (id: string) => RailRequestRow['request'],
    firstQueryAt: Date,
  ): Promise<{ request: RailRequestRow; created: boolean }> {
    const id = randomUUID();
    const [made] = await this.db.query(
      `INSERT INTO rail_requests (id, client_id, rail, operation, subject_kind, subject_id, amount, request, next_query_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (rail, operation, subject_kind, subject_id, client_id) DO NOTHING RETURNING *`,
      [id, subject.clientId, rail, operation, subject.kind, subject.id, amount, JSON.stringify(request(id)), firstQueryAt],
    );
    if (made) return { request: made, created: true };
    return { request: (await this.bySubject(rail, operation, subject))!, created: false };
  }

  async bySubject(rail: string, operation: string, subject: { kind: SubjectKind; id: string }): Promise<RailRequestRow | null> {
    const [row] = await this.db.query(
      `SELECT * FROM rail_requests WHERE rail = $1 AND operation = $2 AND subject_kind = $3 AND subject_id = $4`,
      [rail, operation, subject.kind, subject.id],
    );
    return row ?? null;
  }

  async byId(id: string): Promise<RailRequestRow | null> {
    const [row] = await this.db.query(`SELECT * FROM rail_requests WHERE id = $1`, [id]);
    return row ?? null;
  }

  async byIds(ids: string[]): Promise<RailRequestRow[]> {
    const rows: RailRequestRow[] = await this.db.query(`SELECT * FROM rail_requests WHERE id = ANY($1::uuid[])`, [ids]);
    return ids.map((id) => rows.find((row) => row.id === id)).filter((row): row is RailRequestRow => !!row);
  }

  /**
   * Adds to what was sent about these requests (`request.call`: how a batching operator's call carried them), merged
   * into what is there. A call carries one client's requests (its top-ups come from one client's group).
   */
  async noteCall(clientId: string, ids: string[], call: Record<string, unknown>): Promise<void> {
    await this.db.query(
      `UPDATE rail_requests SET request = jsonb_set(request, '{call}', coalesce(request->'call', '{}'::jsonb) || $2::jsonb)
       WHERE client_id = $3 AND id = ANY($1::uuid[])`,
      [ids, JSON.stringify(call), clientId],
    );
  }

  /**
   * Marks the call under `idempotencyKey` as repeated on those of its requests still waiting on it (no answer, no id,
   * not sent again under another key), and answers them in the call's order. A request that one of its sends found not
   * taken (BUSY) first is left out: it is sent again under a key of its own, so the repeat must not carry it.
   */
  async noteRepeat(clientId: string, ids: string[], idempotencyKey: string): Promise<string[]> {
    const [rows]: [{ id: string }[], number] = await this.db.query(
      `UPDATE rail_requests SET request = jsonb_set(request, '{call,repeatedAt}', to_jsonb(now()))
       WHERE client_id = $3 AND id = ANY($1::uuid[]) AND outcome IS NULL AND operator_request_id IS NULL AND state IN ('SENDING', 'UNKNOWN')
         AND request->'call'->>'idempotencyKey' = $2
       RETURNING id`,
      [ids, idempotencyKey, clientId],
    );
    return ids.filter((id) => rows.some((row) => row.id === id));
  }

  /**
   * Open requests of this operation the operator has given no id for (their send answer was lost, or is still
   * awaited) about this number and amount, the number compared by its digits.
   */
  async unidentifiedAlike(rail: string, operation: string, phoneNumber: string, amount: string): Promise<RailRequestRow[]> {
    return this.db.query(
      `SELECT * FROM rail_requests
       WHERE rail = $1 AND operation = $2 AND outcome IS NULL AND operator_request_id IS NULL AND amount = $4::numeric
         AND regexp_replace(request->'body'->>'phoneNumber', '\\D', '', 'g') = $3`,
      [rail, operation, phoneNumber.replace(/\D/g, ''), amount],
    );
  }

  /** Asks now about the open requests of this operation whose send answer was lost, without an id from the operator. */
  async askUnidentifiedNow(rail: string, operation: string): Promise<void> {
    // Found across clients by a plain read, then moved client by client: a write stays on one client's shard.
    const clients: { client_id: string }[] = await this.db.query(
      `SELECT DISTINCT client_id FROM rail_requests
       WHERE rail = $1 AND operation = $2 AND outcome IS NULL AND state = 'UNKNOWN' AND operator_request_id IS NULL
         AND next_query_at > now()`,
      [rail, operation],
    );
    for (const { client_id } of clients) {
      await this.db.query(
        `UPDATE rail_requests SET next_query_at = now()
         WHERE client_id = $3 AND rail = $1 AND operation = $2 AND outcome IS NULL AND state = 'UNKNOWN'
           AND operator_request_id IS NULL AND next_query_at > now()`,
        [rail, operation, client_id],
      );
    }
  }

  /**
   * Callbacks of this kind received since then that matched no request and whose operator id (`field` of the
   * payload) still names none, one per id: a request whose send answer was lost may be recognised in them.
   */
  async unmatchedCallbacks(rail: string, kind: string, field: string, since: Date): Promise<Record<string, unknown>[]> {
    const rows: { id: string; payload: Record<string, unknown> }[] = await this.db.query(
      `SELECT DISTINCT ON (c.payload->>$3) c.payload->>$3 AS id, c.payload FROM unmatched_rail_callbacks c
       WHERE c.rail = $1 AND c.kind = $2 AND c.received_at >= $4 AND c.payload->>$3 IS NOT NULL
       ORDER BY c.payload->>$3, c.received_at`,
      [rail, kind, field, since],
    );
    if (rows.length === 0) return [];
    // Asked apart, not correlated: the callbacks stay on the coordinator, the requests are spread by client.
    const named: { id: string }[] = await this.db.query(
      `SELECT operator_request_id AS id FROM rail_requests WHERE rail = $1 AND operator_request_id = ANY ($2)`,
      [rail, rows.map((row) => row.id)],
    );
    const known = new Set(named.map((row) => row.id));
    return rows.filter((row) => !known.has(row.id)).map((row) => row.payload);
  }

  /** The request the operator knows by this id (its own id for it, from its answer to our send). */
  async byOperatorRequestId(rail: string, operatorRequestId: string): Promise<RailRequestRow | null> {
    const [row] = await this.db.query(`SELECT * FROM rail_requests WHERE rail = $1 AND operator_request_id = $2`, [
      rail,
      operatorRequestId,
    ]);
    return row ?? null;
  }

  /**
   * How the send went: the operator's identifiers when it took the request, or why its fate is open. A request the
   * operator took is never marked not taken (BUSY) again, whatever a slower, concurrent step concludes; with
   * `onlyWhileSending`, neither is one whose fate is open (a rail that would send it again under a new key), nor one
   * whose call was repeated (noteRepeat): the repeat under the call's key may have been taken.
   */
  async recordSend(
    request: RailRequestKey,
    state: 'SENT' | 'BUSY' | 'UNKNOWN',
    fields: { operatorRequestId?: string | null; operatorConversationId?: string | null; error?: string | null },
    onlyWhileSending = false,
  ): Promise<void> {
    await this.db.query(
      `UPDATE rail_requests SET state = $2, operator_request_id = coalesce($3, operator_request_id),
         operator_conversation_id = coalesce($4, operator_conversation_id), last_error = $5,
         sent_at = CASE WHEN $2 = 'SENT' THEN clock.at ELSE sent_at END
       FROM (SELECT now() AS at) clock -- outside the CASE: Citus refuses a clock inside CASE or COALESCE in an UPDATE
       WHERE client_id = $7 AND id = $1 AND outcome IS NULL AND NOT ($2 = 'BUSY' AND state = 'SENT')
         AND NOT ($6 AND (state <> 'SENDING' OR request->'call'->>'repeatedAt' IS NOT NULL))`,
      [
        request.id,
        state,
        fields.operatorRequestId ?? null,
        fields.operatorConversationId ?? null,
        fields.error ?? null,
        onlyWhileSending,
        request.client_id,
      ],
    );
  }

  /**
   * Takes a request the operator did not take (BUSY) back to SENDING before it is sent again, so that a process dying
   * mid-send leaves a request whose fate is asked about, never one sent blindly again. False when it is no longer BUSY.
   */
  async resending(request: RailRequestKey): Promise<boolean> {
    const [rows] = await this.db.query(
      `UPDATE rail_requests SET state = 'SENDING' WHERE client_id = $2 AND id = $1 AND outcome IS NULL AND state = 'BUSY' RETURNING id`,
      [request.id, request.client_id],
    );
    return rows.length > 0;
  }

  /**
   * Gives the request its answer, once: a final answer wins over none or JAMMED, never over another final one. The
   * subject's follow-up job is queued in the same transaction. False when the request already had a final answer.
   */
  async answer(request: RailRequestKey, answer: RailAnswer, manager?: EntityManager): Promise<boolean> {
    const run = async (tx: EntityManager) => {
      // An UPDATE answers [rows, count] through TypeORM.
      const [[row]] = await tx.query(
        `UPDATE rail_requests SET outcome = $2, result_code = $3, result_description = $4, receipt = coalesce($5, receipt),
           state = 'ANSWERED', answered_at = now()
         WHERE client_id = $6 AND id = $1 AND (outcome IS NULL OR (outcome = 'JAMMED' AND $2 <> 'JAMMED'))
         RETURNING client_id, subject_kind, subject_id`,
        [request.id, answer.outcome, answer.resultCode, answer.description, answer.receipt, request.client_id],
      );
      if (!row) return false;
      const followUp = FOLLOW_UP[row.subject_kind as SubjectKind];
      await this.outbox.enqueue(tx, row.client_id, followUp.topic, followUp.payload(row.subject_id));
      return true;
    };
    return manager ? run(manager) : this.db.transaction(run);
  }

  /** The clients with requests of this rail whose next question is due (a plain read across clients). */
  async clientsDue(rail: string): Promise<string[]> {
    const rows: { client_id: string }[] = await this.db.query(
      `SELECT DISTINCT client_id FROM rail_requests WHERE rail = $1 AND (outcome IS NULL OR outcome = 'JAMMED') AND next_query_at <= now()`,
      [rail],
    );
    return rows.map((row) => row.client_id);
  }

  /**
   * One client's requests without a final answer whose next question is due, oldest first, claimed by pushing their
   * next time.
   */
  async claimDue(rail: string, clientId: string, limit: number, leaseMs: number): Promise<RailRequestRow[]> {
    const [rows] = await this.db.query(
      `UPDATE rail_requests r SET next_query_at = now() + make_interval(secs => $3 / 1000.0)
       FROM (SELECT id FROM rail_requests
             WHERE client_id = $4 AND rail = $1 AND (outcome IS NULL OR outcome = 'JAMMED') AND next_query_at <= now()
             ORDER BY next_query_at LIMIT $2 FOR UPDATE SKIP LOCKED) due
       WHERE r.client_id = $4 AND r.id = due.id RETURNING r.*`,
      [rail, limit, leaseMs, clientId],
    );
    return rows;
  }

  /** After a question: counted, and the next one after the back-off. */
  async scheduleNextQuery(request: RailRequestKey, at: Date, error: string | null): Promise<void> {
    await this.db.query(
      `UPDATE rail_requests SET queries = queries + 1, next_query_at = $2, last_error = $3 WHERE client_id = $4 AND id = $1`,
      [request.id, at, error, request.client_id],
    );
  }

  /**
   * Keeps an operator callback as it came, with what it was found to be, beside the request it names (with that
   * request's client); one naming no request of ours has no client and is kept apart, in unmatched_rail_callbacks.
   */
  async keepCallback(
    manager: EntityManager | null,
    rail: string,
    kind: string,
    request: Pick<RailRequestRow, 'id' | 'client_id'> | null,
    sourceAddress: string,
    payload: unknown,
    effect: 'APPLIED' | 'REPEATED' | 'UNMATCHED',
  ): Promise<void> {
    const db = manager ?? this.db.manager;
    if (!request) {
      await db.query(`INSERT INTO unmatched_rail_callbacks (rail, kind, source_address, payload) VALUES ($1, $2, $3, $4)`, [
        rail,
        kind,
        sourceAddress,
        JSON.stringify(payload),
      ]);
      return;
    }
    await db.query(
      `INSERT INTO rail_callbacks (client_id, rail, kind, rail_request_id, source_address, payload, effect)
       VALUES ($1, $2, $3, $4, $5, $6, $7)`,
      [request.client_id, rail, kind, request.id, sourceAddress, JSON.stringify(payload), effect],
    );
  }

  /** In flight per rail and operation: how many, and the oldest's age in seconds (admin rails:status). */
  async inFlight(): Promise<{ rail: string; operation: string; state: string; count: number; oldest_seconds: number }[]> {
    return this.db.query(
      `SELECT rail, operation, coalesce(outcome, state) AS state, count(*)::int AS count,
              floor(extract(epoch FROM now() - min(created_at)))::int AS oldest_seconds
       FROM rail_requests WHERE outcome IS NULL OR outcome = 'JAMMED'
       GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`,
    );
  }
}
