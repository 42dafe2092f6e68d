import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { AccessTokens } from '../access-tokens';
import { CredentialStatusService } from '../credential-status.service';
import { InvalidGatewayCredentials } from './api-keys.service';
import { GATEWAY_AUDIENCE, GatewayPrincipal } from './gateway-principal';

/** Gateway routes take the token from x-access-token, or from Authorization: Bearer (the IMT document's form). */
@Injectable()
export class GatewayAuthGuard implements CanActivate {
  constructor(
    private readonly tokens: AccessTokens,
    private readonly credentials: CredentialStatusService,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<FastifyRequest & { gatewayPrincipal?: GatewayPrincipal }>();
    const token = tokenOf(request);
    if (!token) throw new InvalidGatewayCredentials();
    const claims = this.tokens.claims<{ sub: string; cid: string; ccode: string }>(token, GATEWAY_AUDIENCE);
    // A token of a revoked key is refused like a forged one.
    if (!claims || !(await this.credentials.apiKeyActive(claims.sub))) throw new InvalidGatewayCredentials();
    request.gatewayPrincipal = { apiKeyId: claims.sub, clientId: claims.cid, clientCode: claims.ccode };
    return true;
  }
}

function tokenOf(request: FastifyRequest): string | null {
  const header = request.headers['x-access-token'];
  if (typeof header === 'string' && header.trim()) return header.trim();
  const authorization = request.headers.authorization;
  const match = typeof authorization === 'string' ? /^Bearer\s+(\S+)$/i.exec(authorization) : null;
  return match ? match[1] : null;
}
