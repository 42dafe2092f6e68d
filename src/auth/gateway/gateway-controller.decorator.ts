import { applyDecorators, Controller, ExceptionFilter, HttpCode, Type, UseFilters, UseGuards } from '@nestjs/common';
import { ApiHeader, ApiTags } from '@nestjs/swagger';
import { GatewayErrorFilter } from '../../common/errors/http-error.filter';
import { GatewayAuthGuard } from './gateway-auth.guard';

/**
 * A gateway controller: routes behind the gateway token, errors in the gateway shape — or in the shape of the
 * interface's own filter (the payout family's), which then falls back to the gateway shape for what it does not own.
 */
export function GatewayController(path: string, tag: string, errorFilter: Type<ExceptionFilter> = GatewayErrorFilter) {
  return applyDecorators(
    Controller(path),
    UseGuards(GatewayAuthGuard),
    UseFilters(errorFilter),
    ApiTags(`gateway: ${tag}`),
    ApiHeader({ name: 'x-access-token', required: true, description: 'token from POST /v1/auth' }),
  );
}

/** Successful gateway calls answer HTTP 200, POSTs included (provider contract §5). */
export const GatewayOk = () => HttpCode(200);
