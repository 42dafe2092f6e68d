import { applyDecorators, Controller, UseFilters, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import { WalletErrorFilter } from '../common/errors/http-error.filter';
import { JsonBodyGuard } from '../common/http/json-body.guard';
import { WalletAuthGuard } from './wallet-auth.guard';

/**
 * A wallet-service controller: under /api/v1, every route behind the wallet bearer token, JSON bodies only, errors
 * in the wallet shape.
 */
export function WalletController(path: string, tag: string) {
  return applyDecorators(
    Controller(`api/v1/${path}`),
    UseGuards(WalletAuthGuard, JsonBodyGuard),
    UseFilters(WalletErrorFilter),
    ApiBearerAuth(),
    ApiTags(`wallet: ${tag}`),
  );
}
