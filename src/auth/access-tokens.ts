import { Injectable } from '@nestjs/common';
import { JwtService } from '@nestjs/jwt';

/** The two kinds of access token, told apart by their audience claim. */
export type TokenAudience = 'wallet' | 'gateway';

/** Verified tokens a process remembers per audience; past that, the least recently presented is forgotten. */
export const MAX_REMEMBERED_TOKENS = 10_000;

/**
 * Checks access tokens (HS256, our key, the expected audience, not expired) and remembers each one that passed
 * until it expires. A client presents the same token on every request of its hour; checking the signature and
 * parsing the claims each time cost more than the rest of authentication. A refused token is not remembered (it
 * is checked again next time). What a token's claims name — the API key, the user's token version — is asked on
 * every request all the same (CredentialStatusService), so revocations and password resets bite exactly as before.
 */
@Injectable()
export class AccessTokens {
  private readonly remembered: Record<TokenAudience, Map<string, { claims: object; expiresAtMs: number }>> = {
    wallet: new Map(),
    gateway: new Map(),
  };

  constructor(private readonly jwt: JwtService) {}

  /** The token's claims; null when it is forged, malformed, expired or meant for the other audience. */
  claims<T extends object>(token: string, audience: TokenAudience): T | null {
    const entries = this.remembered[audience];
    const hit = entries.get(token);
    if (hit) {
      entries.delete(token);
      if (Date.now() < hit.expiresAtMs) {
        entries.set(token, hit); // most recently used last
        return hit.claims as T;
      }
    }
    let claims: T & { exp?: number };
    try {
      claims = this.jwt.verify<T & { exp?: number }>(token, { audience, algorithms: ['HS256'] });
    } catch {
      return null;
    }
    if (entries.size >= MAX_REMEMBERED_TOKENS) entries.delete(entries.keys().next().value!);
    // jsonwebtoken refuses once the clock's whole second reaches `exp`, i.e. from ceil(exp) seconds on.
    entries.set(token, { claims, expiresAtMs: typeof claims.exp === 'number' ? Math.ceil(claims.exp) * 1000 : Infinity });
    return claims;
  }
}
