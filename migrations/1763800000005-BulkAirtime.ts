import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Bulk airtime: one request per merchant reference, its recipients each paid by one hold of the request's float
 * reservation (so the reservation owns the reserve entry and each hold its settle or release entry, invariant (d)).
 */
export class BulkAirtime1763800000005 implements MigrationInterface {
  name = 'BulkAirtime1763800000005';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE airtime_requests (
        id                 bigserial PRIMARY KEY,
        client_id          uuid NOT NULL REFERENCES clients(id),
        reference          varchar(64) NOT NULL,
        client_service_id  uuid NOT NULL REFERENCES client_services(id),
        currency           char(3) NOT NULL,
        recipient_count    smallint NOT NULL CHECK (recipient_count BETWEEN 1 AND 1000),
        -- Set in the accepting transaction, right after the row is claimed (the row first, so a duplicate waits on it).
        reservation_id     bigint UNIQUE REFERENCES float_reservations(id),
        created_at         timestamptz NOT NULL DEFAULT now(),
        UNIQUE (client_id, reference)
      );

      -- 600 from acceptance; 601 while the provider is processing; 602/603 final; 604 jammed (held until resolved).
      CREATE TABLE airtime_recipients (
        id                  bigserial PRIMARY KEY,
        request_id          bigint NOT NULL REFERENCES airtime_requests(id),
        position            smallint NOT NULL,
        phone_number        varchar(25) NOT NULL,
        amount              numeric(20,4) NOT NULL CHECK (amount > 0),
        fee                 numeric(20,4) NOT NULL CHECK (fee >= 0),
        hold_id             bigint NOT NULL UNIQUE REFERENCES float_holds(id),
        correlation_id      uuid NOT NULL UNIQUE DEFAULT gen_random_uuid(),
        service_status      smallint NOT NULL DEFAULT 600 CHECK (service_status BETWEEN 600 AND 607),
        provider_reference  varchar(64),
        message             varchar(255) NOT NULL,
        resolved_at         timestamptz,
        updated_at          timestamptz NOT NULL DEFAULT now(),
        UNIQUE (request_id, position)
      );
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE airtime_recipients; DROP TABLE airtime_requests;`);
  }
}
