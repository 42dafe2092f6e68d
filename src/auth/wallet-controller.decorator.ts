import { applyDecorators, Controller, UseFilters, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiTags, ApiUnauthorizedResponse } from '@nestjs/swagger';
import { WalletErrorFilter } from '../common/errors/http-error.filter';
import { JsonBodyGuard } from '../common/http/json-body.guard';
import { WALLET_SECURITY } from '../common/openapi/api-docs';
import { WalletErrorBody } from '../common/openapi/error-bodies';
import { WalletAuthGuard } from './wallet-auth.guard';

/**
 * A wallet-service controller: under /api/v1, every route behind the wallet bearer token (unless `public`, which
 * only the login controller is), JSON bodies only, errors in the wallet shape.
 */
export function WalletController(path: string, tag: string, access: 'token' | 'public' = 'token') {
  return applyDecorators(
    Controller(`api/v1/${path}`),
    UseGuards(WalletAuthGuard, JsonBodyGuard),
    UseFilters(WalletErrorFilter),
    ...(access === 'token' ? [ApiBearerAuth(WALLET_SECURITY)] : []),
    ApiTags(`wallet: ${tag}`),
    ApiUnauthorizedResponse({
      type: WalletErrorBody,
      description: access === 'token' ? 'missing, expired or invalid token' : 'wrong credentials',
    }),
  );
}
