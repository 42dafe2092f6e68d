import { Injectable, UnauthorizedException } from '@nestjs/common';
import { JwtService } from '@nestjs/jwt';
import { ClientsService } from '../clients/clients.service';
import { SignInAttempts } from './sign-in-attempts';
import { UsersService } from './users.service';

export const WALLET_TOKEN_TTL_SECONDS = 3600;

@Injectable()
export class AuthService {
  constructor(
    private readonly users: UsersService,
    private readonly clients: ClientsService,
    private readonly jwt: JwtService,
    private readonly signIns: SignInAttempts,
  ) {}

  async login(username: string, password: string, address: string) {
    const user = await this.signIns.attempt({ user: username }, address, () => this.users.verify(username, password));
    if (!user) throw new UnauthorizedException('Invalid username or password');
    const client = await this.clients.findById(user.clientId);
    if (!client) throw new UnauthorizedException('Invalid username or password');
    const access_token = await this.jwt.signAsync(
      { sub: user.id, cid: client.id, ccode: client.code, ver: user.tokenVersion },
      { expiresIn: WALLET_TOKEN_TTL_SECONDS, audience: 'wallet' },
    );
    return { access_token, token_type: 'Bearer', expires_in: WALLET_TOKEN_TTL_SECONDS };
  }
}
