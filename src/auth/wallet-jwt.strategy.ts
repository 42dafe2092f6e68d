import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import type { FastifyRequest } from 'fastify';
import { Strategy } from 'passport-custom';
import { AccessTokens } from './access-tokens';
import { CredentialStatusService } from './credential-status.service';
import type { WalletPrincipal } from './principal';

export const WALLET_STRATEGY = 'wallet-jwt';

interface WalletClaims {
  sub: string;
  cid: string;
  ccode: string;
  ver?: unknown;
}

/**
 * The wallet user behind `Authorization: Bearer <token>`, or null. The token is checked through AccessTokens, which
 * remembers verified tokens until they expire (passport-jwt would verify the signature on every request); the
 * user's token version is asked on every request all the same.
 */
@Injectable()
export class WalletJwtStrategy extends PassportStrategy(Strategy, WALLET_STRATEGY) {
  constructor(
    private readonly tokens: AccessTokens,
    private readonly credentials: CredentialStatusService,
  ) {
    super();
  }

  /**
   * Whatever is wrong with the token, there is no user (one plain 401). A failed version lookup (the database
   * away) is thrown, not taken for a bad token: a 401 would make clients drop their tokens and storm the login.
   */
  async validate(request: FastifyRequest): Promise<WalletPrincipal | null> {
    const token = bearerToken(request.headers.authorization);
    const claims = token ? this.tokens.claims<WalletClaims>(token, 'wallet') : null;
    if (!claims) return null;
    // A token issued before the user's last password reset carries an older version and is refused.
    const presented = typeof claims.ver === 'number' ? claims.ver : undefined;
    const current = await this.credentials.userTokenVersion(claims.sub, presented);
    if (claims.ver !== current) return null;
    return { userId: claims.sub, clientId: claims.cid, clientCode: claims.ccode };
  }
}

/**
 * The token of `Authorization: Bearer <token>`, read as the wallet service always has (passport-jwt's rule): the
 * first two runs of non-blank characters, the first being the scheme in any case.
 */
function bearerToken(header: string | undefined): string | null {
  const match = typeof header === 'string' ? /(\S+)\s+(\S+)/.exec(header) : null;
  return match && match[1].toLowerCase() === 'bearer' ? match[2] : null;
}
