import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { GatewayPrincipal } from '../auth/gateway/gateway-principal';
import { VerbatimHttpError } from '../common/errors/gateway-error';
import { PaymentsRepository } from '../payments/payments.repository';

export const STATEMENT_DEFAULT_LIMIT = 100;
export const STATEMENT_MAX_LIMIT = 1000;

export interface PaymentStatementRequest {
  start_date?: unknown;
  end_date?: unknown;
  offset?: unknown;
  limit?: unknown;
}

/** POST /v1/statement: the caller's payments created in a period, oldest first, offset-paginated. */
@Injectable()
export class PaymentStatementService {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly payments: PaymentsRepository,
  ) {}

  async statement(principal: GatewayPrincipal, body: PaymentStatementRequest) {
    const start = isoDate('start_date', body?.start_date);
    const end = isoDate('end_date', body?.end_date, true);
    if (end < start) throw invalid('end_date must not be before start_date', 'INVALID_DATE_RANGE');
    const offset = whole('offset', body?.offset, 0, Number.MAX_SAFE_INTEGER);
    const limit = whole('limit', body?.limit, STATEMENT_DEFAULT_LIMIT, STATEMENT_MAX_LIMIT);
    const rows = await this.payments.statement(this.db.manager, principal.clientId, { start, end, offset, limit });
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

function invalid(description: string, errorCode: string): VerbatimHttpError {
  return new VerbatimHttpError(400, { response_code: 400, response_description: description, error_code: errorCode });
}

/** A date-only end_date means the whole of that day. */
function isoDate(name: string, value: unknown, endOfDay = false): Date {
  if (
    typeof value !== 'string' ||
    !/^\d{4}-\d{2}-\d{2}([T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(value) ||
    Number.isNaN(Date.parse(value)) ||
    !isCalendarDate(value.slice(0, 10))
  ) {
    throw invalid(`${name} is required as an ISO 8601 date`, 'INVALID_DATE');
  }
  const date = new Date(value);
  return endOfDay && /^\d{4}-\d{2}-\d{2}$/.test(value) ? new Date(date.getTime() + 86_400_000 - 1) : date;
}

/** JavaScript reads 2025-02-30 as 2 March; a day that does not exist in its month is refused instead. */
function isCalendarDate(ymd: string): boolean {
  const [year, month, day] = ymd.split('-').map(Number);
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

function whole(name: string, value: unknown, fallback: number, max: number): number {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < (name === 'limit' ? 1 : 0) || value > max) {
    throw invalid(`${name} must be an integer from ${name === 'limit' ? 1 : 0} to ${max}`, 'INVALID_PAGINATION');
  }
  return value;
}
