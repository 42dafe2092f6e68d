import { Body, Controller, ForbiddenException, Get, Inject, Post, Req, Res, UseFilters, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { APP_CONFIG, type AppConfig } from '../infra/config/app-config';
import { PortalErrorFilter } from './portal-error.filter';
import type { PortalRequest } from './portal-http';
import { readCookie, redirect, sendPage, SESSION_COOKIE, sessionCookie } from './portal-http';
import { PortalSessionGuard } from './portal-session.guard';
import { PORTAL_SESSION_MAX_AGE_MS, PortalSessionsService } from './portal-sessions.service';
import { PortalSignInService } from './portal-sign-in.service';
import { signInPage } from './views/pages';

/**
 * Sign-in and sign-out (provider contract §1: `GET /portal/login` is a form posting `username` and `password`,
 * form-encoded, to `POST /portal/login`, which sets an HttpOnly session cookie).
 */
@ApiExcludeController()
@Controller('portal')
@UseFilters(PortalErrorFilter)
export class PortalAuthController {
  constructor(
    private readonly signIn: PortalSignInService,
    private readonly sessions: PortalSessionsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Get('login')
  form(@Res() reply: FastifyReply): void {
    sendPage(reply, 200, (nonce) => signInPage(nonce));
  }

  @Post('login')
  async login(@Req() request: PortalRequest, @Body() body: Record<string, unknown>, @Res() reply: FastifyReply): Promise<void> {
    // The form has no session to carry a CSRF token yet: a browser posting it from another site says so in Origin.
    if (!fromOwnOrigin(request.headers.origin, request.headers.host)) throw new ForbiddenException('Sign in from the portal’s own page.');
    const field = (value: unknown) => (typeof value === 'string' ? value.slice(0, 1000) : '');
    const token = await this.signIn.signIn(field(body?.username), field(body?.password), request.ip);
    void reply.header('set-cookie', sessionCookie(token, PORTAL_SESSION_MAX_AGE_MS / 1000, !this.config.isSandbox));
    redirect(reply, '/portal');
  }

  @Post('logout')
  @UseGuards(PortalSessionGuard)
  async logout(@Req() request: PortalRequest, @Res() reply: FastifyReply): Promise<void> {
    await this.sessions.end(readCookie(request.headers.cookie, SESSION_COOKIE)!);
    void reply.header('set-cookie', sessionCookie('', 0, !this.config.isSandbox));
    redirect(reply, '/portal/login');
  }
}

/** No Origin (a non-browser client) or this host's own; a browser posting from another site says so. */
function fromOwnOrigin(origin: string | undefined, host: string | undefined): boolean {
  if (!origin) return true;
  try {
    return new URL(origin).host === host;
  } catch {
    return false;
  }
}
