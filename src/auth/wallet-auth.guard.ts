import { CanActivate, ExecutionContext, ForbiddenException, Injectable, UnauthorizedException } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyRequest } from 'fastify';
import { parseJsonBodyOfGet } from '../common/http/get-body';
import { AccessTokens } from './access-tokens';
import { CredentialStatusService } from './credential-status.service';
import { IS_PUBLIC, WalletPrincipal } from './principal';

interface WalletClaims {
  sub: string;
  cid: string;
  ccode: string;
  ver?: unknown;
}

/**
 * Every wallet route needs a valid bearer token. A body naming another client's client_code is refused with
 * 403 here, once, instead of in every service. A JSON body sent on a GET (the list endpoints' page and limit) is
 * parsed here too, after authentication, since Fastify leaves GET bodies unread.
 */
@Injectable()
export class WalletAuthGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly tokens: AccessTokens,
    private readonly credentials: CredentialStatusService,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const isPublic = this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, [context.getHandler(), context.getClass()]);
    if (isPublic) return true;
    const request = context.switchToHttp().getRequest<FastifyRequest & { user: WalletPrincipal }>();
    request.user = await this.principal(request);
    await parseJsonBodyOfGet(request);
    const body = request.body;
    if (body && typeof body === 'object' && !Array.isArray(body)) {
      const clientCode = (body as Record<string, unknown>).client_code;
      if (typeof clientCode === 'string' && clientCode !== request.user.clientCode) {
        throw new ForbiddenException('client_code does not belong to the authenticated client');
      }
    }
    return true;
  }

  /** Whatever is wrong with the token, including a failed version lookup, the answer is one plain 401. */
  private async principal(request: FastifyRequest): Promise<WalletPrincipal> {
    const token = bearerToken(request.headers.authorization);
    const claims = token ? this.tokens.claims<WalletClaims>(token, 'wallet') : null;
    if (!claims) throw new UnauthorizedException('Unauthorized');
    // A token issued before the user's last password reset carries an older version and is refused.
    const presented = typeof claims.ver === 'number' ? claims.ver : undefined;
    let current: number | null;
    try {
      current = await this.credentials.userTokenVersion(claims.sub, presented);
    } catch {
      throw new UnauthorizedException('Unauthorized');
    }
    if (claims.ver !== current) throw new UnauthorizedException('Unauthorized');
    return { userId: claims.sub, clientId: claims.cid, clientCode: claims.ccode };
  }
}

/**
 * The token of `Authorization: Bearer <token>`, read as the wallet service always has (passport-jwt's rule): the
 * first two runs of non-blank characters, the first being the scheme in any case.
 */
function bearerToken(header: string | undefined): string | null {
  const match = typeof header === 'string' ? /(\S+)\s+(\S+)/.exec(header) : null;
  return match && match[1].toLowerCase() === 'bearer' ? match[2] : null;
}
