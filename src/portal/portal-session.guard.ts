import { createParamDecorator, ExecutionContext, Injectable } from '@nestjs/common';
import { AuthGuard, IAuthModuleOptions } from '@nestjs/passport';
import { timingSafeEqual } from 'node:crypto';
import { CsrfRefused, PortalRequest, PortalSignInRequired } from './portal-http';
import { PortalSession } from './portal-sessions.service';
import { PORTAL_STRATEGY } from './portal-session.strategy';

/**
 * Every portal page but sign-in: a live session (PortalSessionStrategy's, put on `request.portalSession`; else the
 * browser is sent to sign in), and on every POST the session's CSRF token in the form's `_csrf` field (else 403
 * before the handler runs, so nothing changes).
 */
@Injectable()
export class PortalSessionGuard extends AuthGuard(PORTAL_STRATEGY) {
  async canActivate(context: ExecutionContext): Promise<boolean> {
    await super.canActivate(context);
    const request = context.switchToHttp().getRequest<PortalRequest>();
    const session = request.portalSession!;
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      const given = (request.body as Record<string, unknown> | undefined)?._csrf;
      if (typeof given !== 'string' || !sameText(given, session.csrfToken)) throw new CsrfRefused();
    }
    return true;
  }

  getAuthenticateOptions(): IAuthModuleOptions {
    return { property: 'portalSession' };
  }

  handleRequest<T>(error: unknown, session: T | null | false): T {
    if (error) throw error;
    if (!session) throw new PortalSignInRequired();
    return session;
  }
}

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** The signed-in session of a guarded portal route. */
export const CurrentPortalSession = createParamDecorator((_data: unknown, context: ExecutionContext): PortalSession => {
  return context.switchToHttp().getRequest<PortalRequest>().portalSession!;
});

/** The whole query string of a portal page (a list's filters), read as given: the list parsers check it. */
export const PortalQuery = createParamDecorator((_data: unknown, context: ExecutionContext): Record<string, unknown> => {
  return (context.switchToHttp().getRequest<PortalRequest>().query ?? {}) as Record<string, unknown>;
});
