import { CanActivate, ExecutionContext, Injectable, UnsupportedMediaTypeException } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';

/**
 * The wallet service speaks JSON only (wallet document §4: "Content-Type is application/json"). Fastify already
 * refuses types it has no parser for, but Nest registers a form-urlencoded parser of its own, so a form body would
 * reach validation (and a login form would succeed). A request that carries a body of any other type is a 415.
 */
@Injectable()
export class JsonBodyGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    const hasBody = request.headers['transfer-encoding'] !== undefined || Number(request.headers['content-length'] ?? 0) > 0;
    if (!hasBody) return true;
    const contentType = String(request.headers['content-type'] ?? '').toLowerCase();
    if (!/^application\/([\w.+-]+\+)?json\s*(;|$)/.test(contentType)) {
      throw new UnsupportedMediaTypeException('Content-Type must be application/json');
    }
    return true;
  }
}
