import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { PortalRequest, PortalSignInRequired, redirect, sendPage } from './portal-http';
import { SignInRefused, SignInThrottled } from './portal-sign-in.service';
import { messagePage, signInPage } from './views/pages';

const TITLES: Record<number, string> = { 400: 'Check your input', 403: 'Not allowed', 404: 'Not found', 415: 'Not a form' };

/**
 * The portal answers in pages: no session → sign-in; a refused or throttled sign-in → the sign-in form again
 * (the same words for an unknown user and a wrong password; 429 with Retry-After); 403, 404 and 400 → a page
 * saying so; anything else is logged and shown as a plain error page.
 */
@Catch()
export class PortalErrorFilter implements ExceptionFilter {
  private readonly logger = new Logger('Portal');

  catch(exception: unknown, host: ArgumentsHost): void {
    const reply = host.switchToHttp().getResponse<FastifyReply>();
    const request = host.switchToHttp().getRequest<PortalRequest & { body?: { username?: unknown } }>();
    if (exception instanceof PortalSignInRequired) return redirect(reply, '/portal/login');
    const username = typeof request.body?.username === 'string' ? request.body.username : '';
    if (exception instanceof SignInThrottled) {
      void reply.header('retry-after', String(exception.retryAfterSeconds));
      return sendPage(reply, 429, (nonce) => signInPage(nonce, { username, error: exception.message }));
    }
    if (exception instanceof SignInRefused)
      return sendPage(reply, 401, (nonce) => signInPage(nonce, { username, error: exception.message }));
    const status = exception instanceof HttpException ? exception.getStatus() : 500;
    const title = TITLES[status];
    const signedIn = request.portalSession !== undefined;
    if (title) {
      const message = status === 404 ? 'There is nothing of yours at this address.' : (exception as HttpException).message;
      return sendPage(reply, status, (nonce) => messagePage(nonce, title, message, signedIn));
    }
    this.logger.error({ err: exception, url: request.url }, 'portal error');
    sendPage(reply, 500, (nonce) =>
      messagePage(nonce, 'Something went wrong', 'The portal could not show this page. Try again in a moment.', signedIn),
    );
  }
}
