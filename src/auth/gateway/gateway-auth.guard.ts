import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { JwtService } from '@nestjs/jwt';
import type { FastifyRequest } from 'fastify';
import { InvalidGatewayCredentials } from './api-keys.service';
import { GATEWAY_AUDIENCE, GatewayPrincipal } from './gateway-principal';

/** Gateway routes take the token from x-access-token, or from Authorization: Bearer (the IMT document's form). */
@Injectable()
export class GatewayAuthGuard implements CanActivate {
  constructor(private readonly jwt: JwtService) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<FastifyRequest & { gatewayPrincipal?: GatewayPrincipal }>();
    const token = tokenOf(request);
    if (!token) throw new InvalidGatewayCredentials();
    try {
      const payload = await this.jwt.verifyAsync<{ sub: string; cid: string; ccode: string }>(token, {
        audience: GATEWAY_AUDIENCE,
        algorithms: ['HS256'],
      });
      request.gatewayPrincipal = { apiKeyId: payload.sub, clientId: payload.cid, clientCode: payload.ccode };
      return true;
    } catch {
      throw new InvalidGatewayCredentials();
    }
  }
}

function tokenOf(request: FastifyRequest): string | null {
  const header = request.headers['x-access-token'];
  if (typeof header === 'string' && header.trim()) return header.trim();
  const authorization = request.headers.authorization;
  const match = typeof authorization === 'string' ? /^Bearer\s+(\S+)$/i.exec(authorization) : null;
  return match ? match[1] : null;
}
