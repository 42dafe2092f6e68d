import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import type { FastifyRequest } from 'fastify';
import { Strategy } from 'passport-custom';
import { AccessTokens } from '../access-tokens';
import { CredentialStatusService } from '../credential-status.service';
import { GATEWAY_AUDIENCE, GatewayPrincipal } from './gateway-principal';

export const GATEWAY_STRATEGY = 'gateway-token';

/**
 * The API key behind a gateway token, or null. The token comes from x-access-token, or from Authorization: Bearer
 * (the IMT document's form); AccessTokens remembers verified tokens until they expire. The key's revocation is
 * asked on every request, and a failed lookup (the database away) is thrown, not taken for a refusal.
 */
@Injectable()
export class GatewayTokenStrategy extends PassportStrategy(Strategy, GATEWAY_STRATEGY) {
  constructor(
    private readonly tokens: AccessTokens,
    private readonly credentials: CredentialStatusService,
  ) {
    super();
  }

  async validate(request: FastifyRequest): Promise<GatewayPrincipal | null> {
    const token = tokenOf(request);
    if (!token) return null;
    const claims = this.tokens.claims<{ sub: string; cid: string; ccode: string }>(token, GATEWAY_AUDIENCE);
    // A token of a revoked key is refused like a forged one.
    if (!claims || !(await this.credentials.apiKeyActive(claims.sub))) return null;
    return { apiKeyId: claims.sub, clientId: claims.cid, clientCode: claims.ccode };
  }
}

function tokenOf(request: FastifyRequest): string | null {
  const header = request.headers['x-access-token'];
  if (typeof header === 'string' && header.trim()) return header.trim();
  const authorization = request.headers.authorization;
  const match = typeof authorization === 'string' ? /^Bearer\s+(\S+)$/i.exec(authorization) : null;
  return match ? match[1] : null;
}
