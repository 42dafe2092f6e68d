import { CanActivate, createParamDecorator, ExecutionContext, Injectable } from '@nestjs/common';
import { timingSafeEqual } from 'node:crypto';
import { CsrfRefused, PortalRequest, PortalSignInRequired, readCookie, SESSION_COOKIE } from './portal-http';
import { PortalSession, PortalSessionsService } from './portal-sessions.service';

/**
 * Every portal page but sign-in: a live session (else the browser is sent to sign in), and on every POST the
 * session's CSRF token in the form's `_csrf` field (else 403 before the handler runs, so nothing changes).
 */
@Injectable()
export class PortalSessionGuard implements CanActivate {
  constructor(private readonly sessions: PortalSessionsService) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<PortalRequest>();
    const token = readCookie(request.headers.cookie, SESSION_COOKIE);
    const session = token ? await this.sessions.resume(token) : null;
    if (!session) throw new PortalSignInRequired();
    request.portalSession = session;
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      const given = (request.body as Record<string, unknown> | undefined)?._csrf;
      if (typeof given !== 'string' || !sameText(given, session.csrfToken)) throw new CsrfRefused();
    }
    return true;
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
