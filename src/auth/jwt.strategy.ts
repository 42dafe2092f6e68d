import { Inject, Injectable, UnauthorizedException } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { ExtractJwt, Strategy } from 'passport-jwt';
import { APP_CONFIG } from '../infra/config/app-config';
import type { AppConfig } from '../infra/config/app-config';
import { CredentialStatusService } from './credential-status.service';
import type { WalletPrincipal } from './principal';
import { tokenKey } from './token-key';

@Injectable()
export class JwtStrategy extends PassportStrategy(Strategy, 'wallet-jwt') {
  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly credentials: CredentialStatusService,
  ) {
    super({
      jwtFromRequest: ExtractJwt.fromAuthHeaderAsBearerToken(),
      secretOrKey: tokenKey(config) as never,
      audience: 'wallet',
      algorithms: ['HS256'],
    });
  }

  /** A token issued before the user's last password reset carries an older version and is refused. */
  async validate(payload: { sub: string; cid: string; ccode: string; ver?: unknown }): Promise<WalletPrincipal> {
    const presented = typeof payload.ver === 'number' ? payload.ver : undefined;
    if (payload.ver !== (await this.credentials.userTokenVersion(payload.sub, presented))) throw new UnauthorizedException('Unauthorized');
    return { userId: payload.sub, clientId: payload.cid, clientCode: payload.ccode };
  }
}
