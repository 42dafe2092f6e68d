import { Inject, Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { ExtractJwt, Strategy } from 'passport-jwt';
import { APP_CONFIG } from '../infra/config/app-config';
import type { AppConfig } from '../infra/config/app-config';
import type { WalletPrincipal } from './principal';
import { tokenKey } from './token-key';

@Injectable()
export class JwtStrategy extends PassportStrategy(Strategy, 'wallet-jwt') {
  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    super({
      jwtFromRequest: ExtractJwt.fromAuthHeaderAsBearerToken(),
      secretOrKey: tokenKey(config) as never,
      audience: 'wallet',
      algorithms: ['HS256'],
    });
  }

  validate(payload: { sub: string; cid: string; ccode: string }): WalletPrincipal {
    return { userId: payload.sub, clientId: payload.cid, clientCode: payload.ccode };
  }
}
