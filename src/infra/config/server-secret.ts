import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { AppConfig, ConfigError, EnvironmentConfig, loadConfig } from './app-config';

const SECRET_SETTING = 'sandbox_jwt_secret';

/**
 * The configuration with its server secret (token signing key, and the key callback secrets are sealed with).
 * JWT_SECRET when set (required in production); otherwise the sandbox database's own random secret, created by
 * whichever process asks first, so the api, workers, tests and the admin CLI on one database agree on it and no
 * two sandboxes share one.
 */
export async function resolveConfig(env: NodeJS.ProcessEnv = process.env): Promise<AppConfig> {
  const config = loadConfig(env);
  if (config.jwtSecret !== null) return { ...config, jwtSecret: config.jwtSecret };
  return { ...config, jwtSecret: await sandboxSecret(config) };
}

async function sandboxSecret(config: EnvironmentConfig): Promise<string> {
  const db = new Client({ connectionString: config.databaseUrl });
  await db.connect();
  try {
    await db.query(`INSERT INTO settings (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING`, [
      SECRET_SETTING,
      randomBytes(48).toString('base64url'),
    ]);
    const { rows } = await db.query(`SELECT value FROM settings WHERE name = $1`, [SECRET_SETTING]);
    return rows[0].value;
  } catch (error) {
    if ((error as { code?: string }).code === '42P01')
      throw new ConfigError('The database is not migrated (no settings table): run the migrations first');
    throw error;
  } finally {
    await db.end();
  }
}
