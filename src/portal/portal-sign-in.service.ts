import { HttpException, HttpStatus, Injectable } from '@nestjs/common';
import { UsersService } from '../auth/users.service';
import { PortalSessionsService } from './portal-sessions.service';
import { SignInFailures } from './sign-in-failures';

export class SignInRefused extends HttpException {
  constructor() {
    super('Wrong username or password.', HttpStatus.UNAUTHORIZED);
  }
}

export class SignInThrottled extends HttpException {
  constructor(readonly retryAfterSeconds: number) {
    super('Too many failed sign-ins. Try again later.', HttpStatus.TOO_MANY_REQUESTS);
  }
}

/**
 * Signs a client's wallet user in to the portal with the wallet service's own password check (UsersService.verify:
 * an unknown user is checked against a dummy hash, so both failures give the same answer in the same time).
 */
@Injectable()
export class PortalSignInService {
  constructor(
    private readonly users: UsersService,
    private readonly sessions: PortalSessionsService,
    private readonly throttle: SignInFailures,
  ) {}

  /** The new session's token. */
  async signIn(username: string, password: string, address: string): Promise<string> {
    const wait = await this.throttle.retryAfterSeconds(username, address);
    if (wait !== null) throw new SignInThrottled(wait);
    const user = await this.users.verify(username, password);
    if (!user) {
      await this.throttle.recordFailure(username, address);
      throw new SignInRefused();
    }
    await this.throttle.clear(username);
    return this.sessions.start(user.id, user.clientId);
  }
}
