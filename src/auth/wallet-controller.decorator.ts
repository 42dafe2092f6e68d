import { applyDecorators, Controller, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import { JsonBodyGuard } from '../common/http/json-body.guard';
import { WalletAuthGuard } from './wallet-auth.guard';

/** A wallet-service controller: under /api/v1, every route behind the wallet bearer token, JSON bodies only. */
export function WalletController(path: string, tag: string) {
  return applyDecorators(
    Controller(`api/v1/${path}`),
    UseGuards(WalletAuthGuard, JsonBodyGuard),
    ApiBearerAuth(),
    ApiTags(`wallet: ${tag}`),
  );
}
