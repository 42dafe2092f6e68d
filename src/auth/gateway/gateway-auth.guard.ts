import { Injectable } from '@nestjs/common';
import { AuthGuard, IAuthModuleOptions } from '@nestjs/passport';
import { InvalidGatewayCredentials } from './api-keys.service';
import { GATEWAY_STRATEGY } from './gateway-token.strategy';

/** Gateway routes: GatewayTokenStrategy's API key goes on `request.gatewayPrincipal` (CurrentGatewayClient). */
@Injectable()
export class GatewayAuthGuard extends AuthGuard(GATEWAY_STRATEGY) {
  getAuthenticateOptions(): IAuthModuleOptions {
    return { property: 'gatewayPrincipal' };
  }

  /** No key: the documents' 401 body. Other errors (the database away) go on to the filter, which answers 503. */
  handleRequest<T>(error: unknown, principal: T | null | false): T {
    if (error) throw error;
    if (!principal) throw new InvalidGatewayCredentials();
    return principal;
  }
}
