import { createSecretKey, KeyObject } from 'node:crypto';
import type { AppConfig } from '../infra/config/app-config';

let cached: { secret: string; key: KeyObject } | null = null;

/**
 * The HMAC key of access tokens as a KeyObject. Handed a string, jsonwebtoken first tries to read it as a public
 * key and builds a key object on every verification, which costs more than the verification itself.
 */
export function tokenKey(config: Pick<AppConfig, 'jwtSecret'>): KeyObject {
  if (cached?.secret !== config.jwtSecret) cached = { secret: config.jwtSecret, key: createSecretKey(Buffer.from(config.jwtSecret)) };
  return cached.key;
}
