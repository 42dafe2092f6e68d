import { Body, Controller, HttpCode, Ip, Post, UseFilters } from '@nestjs/common';
import { ApiBody, ApiOkResponse, ApiTags, ApiUnauthorizedResponse } from '@nestjs/swagger';
import { GatewayErrorFilter } from '../../common/errors/http-error.filter';
import { Doc } from '../../common/openapi/api-docs';
import { GatewayUnauthorizedBody } from '../../common/openapi/error-bodies';
import { ApiKeysService } from './api-keys.service';
import { GatewayCredentials, GatewayToken } from './gateway-auth.dto';

@ApiTags('gateway: auth')
@Controller('v1/auth')
@UseFilters(GatewayErrorFilter)
export class GatewayAuthController {
  constructor(private readonly apiKeys: ApiKeysService) {}

  /** Bad or missing keys are a 401 in the documented body, never a validation 400. */
  @Post()
  @HttpCode(200)
  @Doc(
    'Get a gateway access token',
    'Exchange the consumer key and secret for a token valid one hour, sent as x-access-token on every other gateway call.',
  )
  @ApiBody({ type: GatewayCredentials })
  @ApiOkResponse({ type: GatewayToken })
  @ApiUnauthorizedResponse({
    type: GatewayUnauthorizedBody,
    description: 'unknown, revoked or missing keys',
  })
  token(@Body() body: unknown, @Ip() address: string) {
    const fields = body && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
    return this.apiKeys.token(fields.consumer_key, fields.consumer_secret, address);
  }
}
