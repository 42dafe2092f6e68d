import { applyDecorators, Controller, ExceptionFilter, HttpCode, Type, UseFilters, UseGuards } from '@nestjs/common';
import { ApiSecurity, ApiTags, ApiUnauthorizedResponse } from '@nestjs/swagger';
import { GatewayErrorFilter } from '../../common/errors/http-error.filter';
import { GATEWAY_SECURITY } from '../../common/openapi/api-docs';
import { GatewayUnauthorizedBody } from '../../common/openapi/error-bodies';
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
    // Either form of the token is accepted (gateway-token.strategy.ts): OpenAPI lists alternatives as separate entries.
    ApiSecurity(GATEWAY_SECURITY.header),
    ApiSecurity(GATEWAY_SECURITY.bearer),
    ApiUnauthorizedResponse({ type: GatewayUnauthorizedBody, description: 'missing, expired, forged or revoked token' }),
  );
}

/** Successful gateway calls answer HTTP 200, POSTs included (provider contract §5). */
export const GatewayOk = () => HttpCode(200);
