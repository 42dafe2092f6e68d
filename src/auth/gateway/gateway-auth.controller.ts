import { Body, Controller, HttpCode, Post, UseFilters } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { GatewayErrorFilter } from '../../common/errors/http-error.filter';
import { SignInThrottle } from '../../infra/throttling/sign-in-throttle';
import { ApiKeysService } from './api-keys.service';

@ApiTags('gateway: auth')
@Controller('v1/auth')
@UseFilters(GatewayErrorFilter)
export class GatewayAuthController {
  constructor(private readonly apiKeys: ApiKeysService) {}

  /** Bad or missing keys are a 401 in the documented body, never a validation 400. */
  @Post()
  @SignInThrottle('consumer_key')
  @HttpCode(200)
  token(@Body() body: unknown) {
    const fields = body && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
    return this.apiKeys.token(fields.consumer_key, fields.consumer_secret);
  }
}
