import { HttpException, HttpStatus } from '@nestjs/common';

/** A 429 that says when to come back: every interface's filter sends it with `Retry-After` (sendError). */
export class TooManyRequests extends HttpException {
  constructor(readonly retryAfterSeconds: number) {
    super(`Too many requests; retry after ${retryAfterSeconds} seconds`, HttpStatus.TOO_MANY_REQUESTS);
  }
}
