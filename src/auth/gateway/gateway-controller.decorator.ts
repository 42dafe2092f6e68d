import { applyDecorators, Controller, HttpCode, UseFilters, UseGuards } from '@nestjs/common';
import { ApiHeader, ApiTags } from '@nestjs/swagger';
import { GatewayErrorFilter } from '../../common/errors/http-error.filter';
import { GatewayAuthGuard } from './gateway-auth.guard';

/** A gateway controller: routes behind the gateway token, errors in the gateway shape. */
export function GatewayController(path: string, tag: string) {
  return applyDecorators(
    Controller(path),
    UseGuards(GatewayAuthGuard),
    UseFilters(GatewayErrorFilter),
    ApiTags(`gateway: ${tag}`),
    ApiHeader({ name: 'x-access-token', required: true, description: 'token from POST /v1/auth' }),
  );
}

/** Successful gateway calls answer HTTP 200, POSTs included (provider contract §5). */
export const GatewayOk = () => HttpCode(200);
