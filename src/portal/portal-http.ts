import { ForbiddenException, HttpException, HttpStatus } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { randomBytes } from 'node:crypto';
import type { PortalSession } from './portal-sessions.service';

export const SESSION_COOKIE = 'portal_session';

/** A request that passed PortalSessionGuard. */
export type PortalRequest = FastifyRequest & { portalSession?: PortalSession };

/** Raised for a request without a live session: pages send the browser to sign in. */
export class PortalSignInRequired extends HttpException {
  constructor() {
    super('Sign in first', HttpStatus.UNAUTHORIZED);
  }
}

export class CsrfRefused extends ForbiddenException {
  constructor() {
    super('This form has expired or did not come from the portal. Reload the page and try again.');
  }
}

export function readCookie(header: string | undefined, name: string): string | null {
  for (const part of (header ?? '').split(';')) {
    const [key, ...value] = part.trim().split('=');
    if (key === name) return value.join('=');
  }
  return null;
}

/** The session cookie: HttpOnly, SameSite=Strict, for /portal only, Secure outside sandbox. */
export function sessionCookie(token: string, maxAgeSeconds: number, secure: boolean): string {
  return `${SESSION_COOKIE}=${token}; Path=/portal; HttpOnly; SameSite=Strict; Max-Age=${maxAgeSeconds}${secure ? '; Secure' : ''}`;
}

/**
 * Sends a page of the portal: never cached, never framed, and under a CSP allowing only the page's own inline
 * style (by nonce); the portal runs no scripts and loads nothing from elsewhere. Referrer policy same-origin: no
 * address leaves the site, and the browser's form posts carry our Origin (no-referrer would make it "null").
 */
export function sendPage(reply: FastifyReply, status: number, render: (nonce: string) => string): void {
  const nonce = randomBytes(16).toString('base64');
  void reply
    .status(status)
    .header('content-type', 'text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .header('x-frame-options', 'DENY')
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'same-origin')
    .header(
      'content-security-policy',
      `default-src 'none'; style-src 'nonce-${nonce}'; img-src data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'`,
    )
    .send(render(nonce));
}

export function redirect(reply: FastifyReply, location: string): void {
  void reply.header('cache-control', 'no-store').redirect(location, 303);
}
