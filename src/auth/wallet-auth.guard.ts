import { ExecutionContext, ForbiddenException, Injectable, UnauthorizedException } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AuthGuard } from '@nestjs/passport';
import type { FastifyRequest } from 'fastify';
import { parseJsonBodyOfGet } from '../common/http/get-body';
import { IS_PUBLIC, WalletPrincipal } from './principal';
import { WALLET_STRATEGY } from './wallet-jwt.strategy';

/**
 * Every wallet route needs a valid bearer token (WalletJwtStrategy puts its user on `request.user`). A body naming
 * another client's client_code is refused with 403 here, once, instead of in every service. A JSON body sent on a
 * GET (the list endpoints' page and limit) is parsed here too, after authentication, since Fastify leaves GET
 * bodies unread.
 */
@Injectable()
export class WalletAuthGuard extends AuthGuard(WALLET_STRATEGY) {
  constructor(private readonly reflector: Reflector) {
    super();
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const isPublic = this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, [context.getHandler(), context.getClass()]);
    if (isPublic) return true;
    await super.canActivate(context);
    const request = context.switchToHttp().getRequest<FastifyRequest & { user: WalletPrincipal }>();
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

  /** No user: the wallet service's plain 401. */
  handleRequest<T>(error: unknown, user: T | null | false): T {
    if (error) throw error;
    if (!user) throw new UnauthorizedException('Unauthorized');
    return user;
  }
}
