import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What we asked real operators and what they answered. A rail request is one request we made about one subject (a
 * payment, payout or collection reversal); its id is our identifier at the operator (the OriginatorConversationID
 * of a B2C, the last path segment of every callback URL), and the unique (rail, operation, subject) key is what
 * makes a second send impossible: a retry finds the first request instead. The answer is written once; operator
 * callbacks are kept raw, whatever they were found to be.
 */
export class RailRequests1763800000025 implements MigrationInterface {
  name = 'RailRequests1763800000025';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE rail_requests (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        rail text NOT NULL,
        operation text NOT NULL,
        subject_kind text NOT NULL CHECK (subject_kind IN ('PAYMENT', 'PAYOUT', 'REVERSAL')),
        subject_id text NOT NULL,
        amount numeric(20, 4) NOT NULL,
        -- What was sent (path and body, without credentials, which are made afresh for each send).
        request jsonb NOT NULL,
        -- SENDING: written before the call (a crash leaves its fate unknown); SENT: the operator took it; BUSY: the
        -- operator refused it for now (not an outcome, sent again later); UNKNOWN: the call's answer was lost.
        state text NOT NULL DEFAULT 'SENDING' CHECK (state IN ('SENDING', 'SENT', 'BUSY', 'UNKNOWN', 'ANSWERED')),
        operator_request_id text,
        operator_conversation_id text,
        outcome text CHECK (outcome IN ('SUCCEEDED', 'FAILED', 'JAMMED')),
        result_code text,
        result_description text,
        receipt text,
        queries integer NOT NULL DEFAULT 0,
        next_query_at timestamptz NOT NULL,
        last_error text,
        created_at timestamptz NOT NULL DEFAULT now(),
        sent_at timestamptz,
        answered_at timestamptz,
        UNIQUE (rail, operation, subject_kind, subject_id)
      );
      CREATE UNIQUE INDEX rail_requests_operator_request_uq ON rail_requests (rail, operator_request_id)
        WHERE operator_request_id IS NOT NULL;
      CREATE INDEX rail_requests_due_ix ON rail_requests (next_query_at) WHERE outcome IS NULL OR outcome = 'JAMMED';

      CREATE TABLE rail_callbacks (
        id bigserial PRIMARY KEY,
        rail text NOT NULL,
        kind text NOT NULL,
        rail_request_id uuid REFERENCES rail_requests (id),
        source_address text NOT NULL,
        payload jsonb NOT NULL,
        -- APPLIED: it gave the request its answer; REPEATED: the request had its answer already; UNMATCHED: no such
        -- request, or identifiers that are not the request's.
        effect text NOT NULL CHECK (effect IN ('APPLIED', 'REPEATED', 'UNMATCHED')),
        received_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX rail_callbacks_request_ix ON rail_callbacks (rail_request_id);
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE rail_callbacks; DROP TABLE rail_requests;`);
  }
}
