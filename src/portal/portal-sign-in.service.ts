import { HttpException, HttpStatus, Injectable } from '@nestjs/common';
import { SignInAttempts } from '../auth/sign-in-attempts';
import { UsersService } from '../auth/users.service';
import { PortalSessionsService } from './portal-sessions.service';

export class SignInRefused extends HttpException {
  constructor() {
    super('Wrong username or password.', HttpStatus.UNAUTHORIZED);
  }
}

/**
 * Signs a client's wallet user in to the portal with the wallet service's own password check (UsersService.verify:
 * an unknown user is checked against a dummy hash, so both failures give the same answer in the same time), under
 * the sign-in throttle it shares with wallet login (SignInAttempts: TooManyRequests past its limits).
 */
@Injectable()
export class PortalSignInService {
  constructor(
    private readonly users: UsersService,
    private readonly sessions: PortalSessionsService,
    private readonly signIns: SignInAttempts,
  ) {}

  /** The new session's token. */
  async signIn(username: string, password: string, address: string): Promise<string> {
    const user = await this.signIns.attempt({ user: username }, address, () => this.users.verify(username, password));
    if (!user) throw new SignInRefused();
    return this.sessions.start(user);
  }
}
