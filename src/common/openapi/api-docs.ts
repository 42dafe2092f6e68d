import { applyDecorators, Type } from '@nestjs/common';
import {
  ApiBody,
  ApiExtension,
  ApiExtraModels,
  ApiOperation,
  ApiProperty,
  ApiPropertyOptional,
  ApiQuery,
  ApiResponse,
  getSchemaPath,
} from '@nestjs/swagger';
import { DEFAULT_LIMIT, MAX_LIMIT } from '../http/pagination';
import { GatewayErrorBody, PayoutErrorBody, WalletErrorBody } from './error-bodies';

/** Security scheme names of the document (http-app.ts): one for the wallet service, two accepted forms for the gateways. */
export const WALLET_SECURITY = 'wallet-jwt';
export const GATEWAY_SECURITY = { header: 'gateway-token', bearer: 'gateway-bearer' } as const;

/** Extension marking a POST that takes its input from the path and query only (the completeness test reads it). */
export const NO_REQUEST_BODY = 'x-no-request-body';

type ErrorStatus = 400 | 401 | 403 | 404 | 409 | 410 | 503;

const MEANING: Record<ErrorStatus, string> = {
  400: 'the request is invalid; nothing was changed',
  401: 'missing, expired or invalid token',
  403: 'the request names another client',
  404: 'no such resource of the caller',
  409: 'the reference was used before, or the resource is in a state that forbids this',
  410: 'expired',
  503: 'the rail that would carry it is down (its circuit is open); nothing was stored, try again later',
};

/** Statuses with the default meaning, or a map of status to what it means on this route. */
type ErrorStatuses = (ErrorStatus | Partial<Record<ErrorStatus, string>>)[];

/** Error responses of a route, all in one interface's body shape. */
export function ApiErrors(body: Type<unknown>, ...statuses: ErrorStatuses) {
  const entries = statuses.flatMap((s) =>
    typeof s === 'number' ? [[s, MEANING[s]] as const] : Object.entries(s).map(([k, v]) => [Number(k), v] as const),
  );
  return applyDecorators(...entries.map(([status, description]) => ApiResponse({ status, description, type: body })));
}

/**
 * The 400 of a gateway route with an error shape of its own: that shape for a refused request, or the gateway's for a
 * body refused before the route runs (not JSON, too large), which the application filter answers.
 */
export const BadRequestOrUnreadable = (body: Type<unknown>, description: string) =>
  applyDecorators(
    ApiExtraModels(body, GatewayErrorBody),
    ApiResponse({
      status: 400,
      description: `${description}; a body that is not JSON: the gateway's error body`,
      schema: { oneOf: [{ $ref: getSchemaPath(body) }, { $ref: getSchemaPath(GatewayErrorBody) }] },
    }),
  );

export const WalletErrors = (...statuses: ErrorStatuses) => ApiErrors(WalletErrorBody, ...statuses);
export const GatewayErrors = (...statuses: ErrorStatuses) => ApiErrors(GatewayErrorBody, ...statuses);
export const PayoutErrors = (...statuses: ErrorStatuses) => ApiErrors(PayoutErrorBody, ...statuses);

/** The operation's summary line and, where the summary is not enough, a short description. */
export const Doc = (summary: string, description?: string) => ApiOperation({ summary, description });

/** A POST whose input is in its path and query string. */
export const NoRequestBody = () => ApiExtension(NO_REQUEST_BODY, true);

/** `page` and `limit` of the wallet service's lists (common/http/pagination.ts). */
export const ApiPageQuery = () =>
  applyDecorators(
    ApiQuery({ name: 'page', required: false, type: Number, description: 'from 1; default 1' }),
    ApiQuery({ name: 'limit', required: false, type: Number, description: `1 to ${MAX_LIMIT}; default ${DEFAULT_LIMIT}` }),
  );

/** The request body with named examples, for routes whose DTO fields carry none of their own. */
export const BodyExamples = (type: Type<unknown>, examples: Record<string, { summary: string; value: object }>) =>
  ApiBody({ type, examples });

/** A status code property documented from its constants: the codes, and each one's name in lower case. */
export const codeProperty = (codes: Record<string, number>, example: number) => ({
  enum: Object.values(codes),
  example,
  description: Object.entries(codes)
    .map(([name, code]) => `${code} ${name.toLowerCase()}`)
    .join(', '),
});

/** Decimal text as the interfaces write amounts and rates ("100", "100.50", "-2.0000"): no exponent, no spaces. */
export const DECIMAL_PATTERN = '^-?\\d+(\\.\\d+)?$';

interface MoneyOptions {
  example: string | number;
  description?: string;
  /** Absent from the body unless given (a request's optional amount). */
  optional?: boolean;
  /** May be null (an answer's amount that does not exist yet). */
  nullable?: boolean;
}

/**
 * The one schema of a money amount (or rate). In a request: a JSON number or a decimal string, as the provider
 * contract §3 accepts (a generated client types it `number | string`); in an answer: decimal text, exact.
 */
export function MoneyProperty(form: 'request' | 'answer', { optional, nullable, ...options }: MoneyOptions) {
  const decimalText = { type: 'string' as const, pattern: DECIMAL_PATTERN };
  const schema = form === 'request' ? { oneOf: [{ type: 'number' as const }, decimalText], type: undefined } : { ...decimalText, nullable };
  return (optional ? ApiPropertyOptional : ApiProperty)({ ...schema, ...options });
}

/** Free JSON carried as it is (`extra_data`, `source_transaction_data`): an object with any members. */
export function FreeObjectProperty(options: { example?: object; description?: string; optional?: boolean; nullable?: boolean }) {
  const { optional, ...rest } = options;
  return (optional ? ApiPropertyOptional : ApiProperty)({ type: 'object', additionalProperties: true, ...rest });
}
