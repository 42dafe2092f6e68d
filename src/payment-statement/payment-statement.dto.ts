import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsInt, IsOptional, Max, Min, registerDecorator, ValidationArguments, ValidationOptions } from 'class-validator';

export const STATEMENT_DEFAULT_LIMIT = 100;
export const STATEMENT_MAX_LIMIT = 1000;

const invalidDate = (name: string) => ({
  message: `${name} is required as an ISO 8601 date`,
  context: { statementErrorCode: 'INVALID_DATE' },
});
const invalidPage = (name: string, min: number, max: number) => ({
  message: `${name} must be an integer from ${min} to ${max}`,
  context: { statementErrorCode: 'INVALID_PAGINATION' },
});
const OFFSET = invalidPage('offset', 0, Number.MAX_SAFE_INTEGER);
const LIMIT = invalidPage('limit', 1, STATEMENT_MAX_LIMIT);

/**
 * POST /v1/statement. Its errors have a shape of their own (`{response_code, response_description, error_code}`),
 * built from the first failed rule's message and context; rules run in the order the fields are declared.
 */
export class PaymentStatementDto {
  @ApiProperty({ example: '2025-01-01' }) @IsStatementDate(invalidDate('start_date')) start_date: string;

  /** A date-only end_date means the whole of that day. Checked for its own form first, then against start_date. */
  @ApiProperty({ example: '2025-01-31' })
  @IsNotBeforeStart({ message: 'end_date must not be before start_date', context: { statementErrorCode: 'INVALID_DATE_RANGE' } })
  @IsStatementDate(invalidDate('end_date'))
  end_date: string;

  @ApiPropertyOptional({ example: 0, description: 'default 0' })
  @IsOptional()
  @IsInt(OFFSET)
  @Min(0, OFFSET)
  @Max(Number.MAX_SAFE_INTEGER, OFFSET)
  offset?: number;

  @ApiPropertyOptional({ description: `default ${STATEMENT_DEFAULT_LIMIT}`, maximum: STATEMENT_MAX_LIMIT, example: 100 })
  @IsOptional()
  @IsInt(LIMIT)
  @Min(1, LIMIT)
  @Max(STATEMENT_MAX_LIMIT, LIMIT)
  limit?: number;
}

/** The instant a statement bound stands for, or null when it is not an ISO 8601 date of the calendar. */
export function statementDate(value: unknown, endOfDay = false): Date | null {
  if (
    typeof value !== 'string' ||
    !/^\d{4}-\d{2}-\d{2}([T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(value) ||
    Number.isNaN(Date.parse(value)) ||
    !isCalendarDate(value.slice(0, 10))
  ) {
    return null;
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

function IsStatementDate(options: ValidationOptions) {
  return function (target: object, propertyName: string) {
    registerDecorator({
      name: 'isStatementDate',
      target: target.constructor,
      propertyName,
      options,
      validator: { validate: (value: unknown) => statementDate(value) !== null },
    });
  };
}

/** end_date (to the end of its day when date-only) not before start_date; left to the date rule when either is malformed. */
function IsNotBeforeStart(options: ValidationOptions) {
  return function (target: object, propertyName: string) {
    registerDecorator({
      name: 'isNotBeforeStart',
      target: target.constructor,
      propertyName,
      options,
      validator: {
        validate: (value: unknown, args: ValidationArguments) => {
          const start = statementDate((args.object as PaymentStatementDto).start_date);
          const end = statementDate(value, true);
          return !start || !end || end >= start;
        },
      },
    });
  };
}

/** A statement row (collection document §2 "Statement row"). */
export class PaymentStatementRow {
  @ApiProperty({ example: 1042 }) payment_id: number;
  @ApiProperty({ example: 'SBX7Q2K9XW' }) payer_transaction_reference: string;
  @ApiProperty({ example: 'ORDER-42' }) external_reference: string;
  @ApiProperty({ example: 'ACC-001' }) account_number: string;
  @ApiProperty({ example: 100 }) amount: number;
  @ApiProperty({ example: 'KES' }) currency: string;
  @ApiProperty({ example: 700 }) payment_status: number;
  @ApiProperty({ example: 'Order 42' }) receiver_narration: string;
  @ApiProperty({ example: 'MMONEY_KEN' }) payment_method: string;
  @ApiProperty({ example: 1.5 }) service_charge: number;
  @ApiProperty({ example: 'CS1001' }) service_code: string;
  @ApiProperty({ format: 'date-time' }) created_at: string;
}
