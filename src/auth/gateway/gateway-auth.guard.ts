import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { JwtService } from '@nestjs/jwt';
import type { FastifyRequest } from 'fastify';
import { CredentialStatusService } from '../credential-status.service';
import { InvalidGatewayCredentials } from './api-keys.service';
import { GATEWAY_AUDIENCE, GatewayPrincipal } from './gateway-principal';

/** Gateway routes take the token from x-access-token, or from Authorization: Bearer (the IMT document's form). */
@Injectable()
export class GatewayAuthGuard implements CanActivate {
  constructor(
    private readonly jwt: JwtService,
    private readonly credentials: CredentialStatusService,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<FastifyRequest & { gatewayPrincipal?: GatewayPrincipal }>();
    const token = tokenOf(request);
    if (!token) throw new InvalidGatewayCredentials();
    const payload = await this.jwt
      .verifyAsync<{ sub: string; cid: string; ccode: string }>(token, { audience: GATEWAY_AUDIENCE, algorithms: ['HS256'] })
      .catch(() => null);
    // A token of a revoked key is refused like a forged one.
    if (!payload || !(await this.credentials.apiKeyActive(payload.sub))) throw new InvalidGatewayCredentials();
    request.gatewayPrincipal = { apiKeyId: payload.sub, clientId: payload.cid, clientCode: payload.ccode };
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
