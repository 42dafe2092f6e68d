import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { RequestValidationError } from '../common/errors/request-validation.error';
import { RETRY_AFTER_SECONDS } from '../common/errors/http-error.filter';
import { isDatabaseUnavailable } from '../common/errors/pg-errors';
import { PortalRequest, PortalSignInRequired, redirect, sendPage } from './portal-http';
import { TooManyRequests } from '../common/errors/too-many-requests';
import { frame } from './portal-frame';
import { SignInRefused } from './portal-sign-in.service';
import { messagePage, signInPage } from './views/pages';

const TITLES: Record<number, string> = { 400: 'Check your input', 403: 'Not allowed', 404: 'Not found', 415: 'Not a form' };

/** What a refused request is told: each broken rule of a form or query, else the exception's own words. */
function messageOf(exception: HttpException): string {
  if (exception.getStatus() === 404) return 'There is nothing of yours at this address.';
  if (exception instanceof RequestValidationError) return exception.problems.map((p) => p.message).join('; ');
  return exception.message;
}

/**
 * The portal answers in pages: no session → sign-in; a refused or throttled sign-in → the sign-in form again
 * (the same words for an unknown user and a wrong password; 429 with Retry-After); 403, 404 and 400 → a page
 * saying so; the database away → 503 with Retry-After; anything else is logged and shown as a plain error page.
 */
@Catch()
export class PortalErrorFilter implements ExceptionFilter {
  private readonly logger = new Logger('Portal');

  catch(exception: unknown, host: ArgumentsHost): void {
    const reply = host.switchToHttp().getResponse<FastifyReply>();
    const request = host.switchToHttp().getRequest<PortalRequest & { body?: { username?: unknown } }>();
    if (exception instanceof PortalSignInRequired) return redirect(reply, '/portal/login');
    const username = typeof request.body?.username === 'string' ? request.body.username : '';
    if (exception instanceof TooManyRequests) {
      void reply.header('retry-after', String(exception.retryAfterSeconds));
      const error = 'Too many sign-in attempts. Try again later.';
      return sendPage(reply, 429, (nonce) => signInPage(nonce, { username, error }));
    }
    if (exception instanceof SignInRefused)
      return sendPage(reply, 401, (nonce) => signInPage(nonce, { username, error: exception.message }));
    const status = exception instanceof HttpException ? exception.getStatus() : 500;
    const session = request.portalSession;
    // Signed in, the page keeps the portal's navigation; otherwise it offers the sign-in.
    const page = (title: string, message: string) => (nonce: string) =>
      messagePage(session ? frame(session, title, '')(nonce) : { nonce, title }, message);
    const title = TITLES[status];
    if (isDatabaseUnavailable(exception)) {
      void reply.header('retry-after', String(RETRY_AFTER_SECONDS));
      return sendPage(reply, 503, page('Temporarily unavailable', 'The portal cannot reach its data just now. Try again in a moment.'));
    }
    if (title) return sendPage(reply, status, page(title, messageOf(exception as HttpException)));
    this.logger.error({ err: exception, url: request.url }, 'portal error');
    sendPage(reply, 500, page('Something went wrong', 'The portal could not show this page. Try again in a moment.'));
  }
}
