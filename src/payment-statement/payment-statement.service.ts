import { Inject, Injectable } from '@nestjs/common';
import { GatewayPrincipal } from '../auth/gateway/gateway-principal';
import { APP_CONFIG, type AppConfig } from '../infra/config/app-config';
import { ReadReplica } from '../infra/database/read-replica';
import { REDIS } from '../infra/queue/queue.module';
import { type RedisClient, redisNamespace } from '../infra/queue/redis';
import { PaymentsRepository } from '../collections/payments.repository';
import { PaymentStatementDto, STATEMENT_DEFAULT_LIMIT, statementDate } from './payment-statement.dto';
import { StatementPageStarts } from './statement-page-starts';

/** POST /v1/statement: the caller's payments created in a period, oldest first, offset-paginated; read from the replica. */
@Injectable()
export class PaymentStatementService {
  private readonly pageStarts: StatementPageStarts;

  constructor(
    private readonly replica: ReadReplica,
    private readonly payments: PaymentsRepository,
    @Inject(REDIS) redis: RedisClient,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.pageStarts = new StatementPageStarts(redis, redisNamespace(config.databaseUrl, 'statement-pages'));
  }

  async statement(principal: GatewayPrincipal, dto: PaymentStatementDto) {
    const period = { clientId: principal.clientId, start: statementDate(dto.start_date)!, end: statementDate(dto.end_date, true)! };
    const offset = dto.offset ?? 0;
    const limit = dto.limit ?? STATEMENT_DEFAULT_LIMIT;
    const after = offset > 0 ? await this.pageStarts.get(period, offset) : null;
    const rows = await this.replica.read((db) =>
      this.payments.statement(db.manager, period.clientId, {
        start: period.start,
        end: period.end,
        limit,
        from: after ? { after } : { offset },
      }),
    );
    const last = rows[rows.length - 1];
    if (rows.length === limit) await this.pageStarts.set(period, offset + limit, { at: last.position_at, id: String(last.id) });
    return rows.map((r) => ({
      payment_id: Number(r.id),
      payer_transaction_reference: r.payer_transaction_id ?? '',
      external_reference: r.external_reference,
      account_number: r.account_number,
      amount: Number(r.service_amount),
      currency: r.currency,
      payment_status: Number(r.payment_status),
      receiver_narration: r.description,
      payment_method: r.payment_method_code,
      // Summed in numeric by Postgres; the document types the field as a JSON number.
      service_charge: Number(r.service_charge),
      service_code: r.service_code,
      created_at: new Date(r.created_at).toISOString(),
    }));
  }
}
