import { plainToInstance, Transform } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, IsUrl, Matches, Max, MaxLength, Min, MinLength, validateSync } from 'class-validator';

const DEFAULT_CALLBACK_RETRY_DELAYS_MS = '900000,21600000,172800000';
/** Postgres' own default max_connections: a pool beyond it would only wait inside Postgres, for every process. */
const MAX_DB_POOL_SIZE = 100;

/** Raw environment, validated once at start-up. Names are fixed by the provider contract (§1). */
class Environment {
  @IsOptional()
  @Transform(({ value }) => (value === undefined ? undefined : Number(value)))
  @IsInt()
  @Min(1)
  @Max(65535)
  PORT?: number;

  @IsOptional()
  @MaxLength(253)
  // A host name or IPv4 address (dot-separated labels), or an IPv6 address; no scheme, no port.
  @Matches(/^(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*|[0-9A-Fa-f]*:[0-9A-Fa-f:.]*)$/, {
    message: 'HOST must be an address or host name to listen on, e.g. 127.0.0.1 or 0.0.0.0',
  })
  HOST?: string;

  @IsString()
  @Matches(/^postgres(ql)?:\/\//, {
    message: 'DATABASE_URL must be a postgres:// URL',
  })
  DATABASE_URL: string;

  @IsOptional()
  @Matches(/^postgres(ql)?:\/\//, {
    message: 'DATABASE_READ_URL must be a postgres:// URL',
  })
  DATABASE_READ_URL?: string;

  @IsOptional()
  @Matches(/^[1-9]\d*$/, {
    message: 'DATABASE_READ_MAX_LAG_MS must be a positive whole number of milliseconds',
  })
  DATABASE_READ_MAX_LAG_MS?: string;

  @IsOptional()
  @Matches(/^rediss?:\/\//, { message: 'REDIS_URL must be a redis:// URL' })
  REDIS_URL?: string;

  @IsOptional()
  @Matches(/^\s*[A-Za-z0-9.-]+:\d{1,5}\s*(,\s*[A-Za-z0-9.-]+:\d{1,5}\s*)*$/, {
    message: 'REDIS_CLUSTER_NODES must be a comma list of host:port seeds of a Redis Cluster, e.g. 10.0.0.1:6379,10.0.0.2:6379',
  })
  REDIS_CLUSTER_NODES?: string;

  @IsOptional()
  @IsIn(['sandbox', 'production'])
  APP_ENV?: 'sandbox' | 'production';

  @IsOptional()
  @IsUrl({ require_tld: false, require_protocol: true })
  PUBLIC_BASE_URL?: string;

  @IsOptional()
  @Matches(/^\d+(,\d+)*$/, {
    message: 'CALLBACK_RETRY_DELAYS_MS must be a comma list of milliseconds',
  })
  CALLBACK_RETRY_DELAYS_MS?: string;

  @IsOptional()
  @Matches(/^\d+$/, {
    message: 'SANDBOX_SETTLE_DELAY_MS must be a whole number of milliseconds',
  })
  SANDBOX_SETTLE_DELAY_MS?: string;

  @IsOptional()
  @Matches(/^\d+$/, {
    message: 'SANDBOX_MINUTE_MS must be a whole number of milliseconds',
  })
  SANDBOX_MINUTE_MS?: string;

  @IsOptional()
  @Matches(/^[1-9]\d{3,}$/, {
    message: 'OUTBOX_LOST_JOB_AFTER_MS must be a whole number of milliseconds, at least 1000',
  })
  OUTBOX_LOST_JOB_AFTER_MS?: string;

  @IsOptional()
  @Matches(/^[1-9]\d{2,}$/, {
    message: 'PAYOUT_RECONCILE_AFTER_MS must be a whole number of milliseconds, at least 100',
  })
  PAYOUT_RECONCILE_AFTER_MS?: string;

  @IsOptional()
  @Matches(/^[1-9]\d*$/, {
    message: 'RECON_MATCH_WINDOW_MS must be a positive whole number of milliseconds',
  })
  RECON_MATCH_WINDOW_MS?: string;

  @IsOptional()
  @Matches(/^(off|([01]\d|2[0-3]):[0-5]\d)$/, {
    message: 'RECON_DAILY_AT must be a UTC time as HH:MM, or off',
  })
  RECON_DAILY_AT?: string;

  @IsOptional()
  @Matches(/^[1-9]\d*$/, {
    message: 'FX_MAX_RATE_AGE_MS must be a positive whole number of milliseconds',
  })
  FX_MAX_RATE_AGE_MS?: string;

  @IsOptional()
  @Transform(({ value }) => (value === undefined ? undefined : /^\d+$/.test(value) ? Number(value) : NaN))
  @IsInt({
    message: `DB_POOL_SIZE must be a whole number from 1 to ${MAX_DB_POOL_SIZE}`,
  })
  @Min(1, {
    message: `DB_POOL_SIZE must be a whole number from 1 to ${MAX_DB_POOL_SIZE}`,
  })
  @Max(MAX_DB_POOL_SIZE, {
    message: `DB_POOL_SIZE must be a whole number from 1 to ${MAX_DB_POOL_SIZE}`,
  })
  DB_POOL_SIZE?: number;

  @IsOptional()
  @Matches(/^[1-9]\d{2,}$/, {
    message: 'PORTAL_IDLE_TIMEOUT_MS must be a whole number of milliseconds, at least 100',
  })
  PORTAL_IDLE_TIMEOUT_MS?: string;

  @IsOptional()
  @Matches(/^\d+$/, {
    message: 'CALLBACK_SECRET_OVERLAP_MS must be a whole number of milliseconds',
  })
  CALLBACK_SECRET_OVERLAP_MS?: string;

  @IsOptional()
  @Matches(/^[1-9]\d{3,}$/, {
    message: 'CALLBACK_LEASE_MS must be a whole number of milliseconds, at least 1000',
  })
  CALLBACK_LEASE_MS?: string;

  @IsOptional()
  @IsString()
  @MinLength(32, { message: 'JWT_SECRET must be at least 32 characters' })
  JWT_SECRET?: string;

  @IsOptional()
  @Matches(/^[\w.:/]+(\s*,\s*[\w.:/]+)*$/, {
    message: 'TRUSTED_PROXIES must be a comma list of addresses or CIDRs',
  })
  TRUSTED_PROXIES?: string;

  @IsOptional()
  @IsIn(['true', 'false'], { message: 'DOCS_ENABLED must be true or false' })
  DOCS_ENABLED?: string;

  @IsOptional()
  @IsString()
  @MinLength(16, { message: 'METRICS_TOKEN must be at least 16 characters' })
  METRICS_TOKEN?: string;

  @IsOptional()
  @Matches(/^[1-9]\d*$/, {
    message: 'GATEWAY_RATE_LIMIT_PER_MINUTE must be a positive whole number',
  })
  GATEWAY_RATE_LIMIT_PER_MINUTE?: string;

  @IsOptional()
  @Matches(/^[1-9]\d*$/, {
    message: 'LOGIN_RATE_LIMIT_PER_MINUTE must be a positive whole number',
  })
  LOGIN_RATE_LIMIT_PER_MINUTE?: string;

  @IsOptional()
  @Matches(/^[1-9]\d*$/, {
    message: 'LOGIN_IP_RATE_LIMIT_PER_MINUTE must be a positive whole number',
  })
  LOGIN_IP_RATE_LIMIT_PER_MINUTE?: string;

  @IsOptional()
  @IsIn(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
  LOG_LEVEL?: string;

  @IsOptional()
  @IsString()
  @MinLength(1)
  ADMIN_USERNAME?: string;

  @IsOptional()
  @IsString()
  @MinLength(12, { message: 'ADMIN_PASSWORD must be at least 12 characters' })
  ADMIN_PASSWORD?: string;

  @IsOptional()
  @Matches(/^\d+$/, {
    message: 'SHUTDOWN_GRACE_MS must be a whole number of milliseconds',
  })
  SHUTDOWN_GRACE_MS?: string;

  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(80)
  ISSUER_NAME?: string;
}

export interface AppConfig {
  port: number;
  /** The address HTTP listens on: loopback in sandbox, so a laptop's sandbox is not served to its network. */
  host: string;
  databaseUrl: string;
  /** A streaming replica for statements, history and the portal's lists (§12); null: every read goes to the primary. */
  databaseReadUrl: string | null;
  /** A replica further behind than this is skipped for the primary. */
  databaseReadMaxLagMs: number;
  redisUrl: string;
  /** Seeds of a Redis Cluster: when set, every Redis client is a cluster client and redisUrl is ignored. */
  redisClusterNodes: Array<{ host: string; port: number }> | null;
  appEnv: 'sandbox' | 'production';
  isSandbox: boolean;
  publicBaseUrl: string;
  callbackRetryDelaysMs: number[];
  sandboxSettleDelayMs: number;
  sandboxMinuteMs: number;
  /** A job relayed to BullMQ and not finished after this long is presumed lost with Redis and relayed again. */
  outboxLostJobAfterMs: number;
  /**
   * A payout pending or jammed, or an airtime recipient processing or jammed, this long since the rail (provider) was
   * last asked is asked again (reconciliation).
   */
  payoutReconcileAfterMs: number;
  /** How far apart in time an operator's row and a movement of ours may be to match by amount and counterparty. */
  reconMatchWindowMs: number;
  /** When the worker reconciles the previous UTC day (minutes after midnight UTC), or null for never. */
  reconDailyAtMinute: number | null;
  /** Conversions refuse, and GET /v1/fx leaves out, rates last updated longer ago than this. */
  fxMaxRateAgeMs: number;
  /** Postgres connections of this process's pool. */
  dbPoolSize: number;
  /** A portal session unused this long is over (the user signs in again). */
  portalIdleTimeoutMs: number;
  /** After a signing-secret rotation in the portal, the previous secret still signs callbacks this long. */
  callbackSecretOverlapMs: number;
  /** How long a worker holds a callback delivery while posting it; a crashed worker's lease expires after this. */
  callbackLeaseMs: number;
  /** Addresses/CIDRs of reverse proxies whose X-Forwarded-For is believed; empty: none. */
  trustedProxies: string[];
  /** Swagger UI at /docs (default: on in sandbox, off in production). */
  docsEnabled: boolean;
  /** Bearer token /metrics requires; null: open in sandbox, not served in production. */
  metricsToken: string | null;
  /** Requests per minute one gateway API key (or, before authentication, one client address) may make. */
  gatewayRateLimitPerMinute: number;
  /** Sign-in attempts per minute per credential (username, consumer key). */
  loginRateLimitPerMinute: number;
  /** Sign-in attempts per minute from one client address, whatever the credential. */
  loginIpRateLimitPerMinute: number;
  jwtSecret: string;
  logLevel: string;
  /** Operator credentials for /admin/queues; no password, no dashboard. */
  adminUsername: string;
  adminPassword: string | null;
  /** After SIGINT/SIGTERM the process exits within this long, even if a close hook still waits (main.ts). */
  shutdownGraceMs: number;
  /** Who issues documents such as account statements (their header and every PDF page). */
  issuerName: string;
}

/**
 * The configuration as the environment gives it: without JWT_SECRET (sandbox only) the secret is null here and
 * is read from the database by resolveConfig (src/infra/config/server-secret.ts).
 */
export type EnvironmentConfig = Omit<AppConfig, 'jwtSecret'> & {
  jwtSecret: string | null;
};

export const APP_CONFIG = Symbol('APP_CONFIG');

export class ConfigError extends Error {}

/**
 * Reads and validates the environment. A missing or malformed variable throws a ConfigError naming it,
 * so the process stops at start-up instead of failing on the first request.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): EnvironmentConfig {
  const raw = plainToInstance(Environment, pick(env), {
    enableImplicitConversion: false,
  });
  const errors = validateSync(raw, { whitelist: true });
  if (errors.length > 0) {
    const details = errors.flatMap((e) => Object.values(e.constraints ?? {})).join('; ');
    throw new ConfigError(`Invalid configuration: ${details}`);
  }
  const appEnv = raw.APP_ENV ?? 'sandbox';
  const port = raw.PORT ?? 3000;
  if (appEnv === 'production' && !raw.JWT_SECRET) {
    throw new ConfigError('Invalid configuration: JWT_SECRET is required when APP_ENV=production');
  }
  return {
    port,
    host: raw.HOST ?? (appEnv === 'sandbox' ? '127.0.0.1' : '0.0.0.0'),
    databaseUrl: raw.DATABASE_URL,
    databaseReadUrl: raw.DATABASE_READ_URL ?? null,
    databaseReadMaxLagMs: Number(raw.DATABASE_READ_MAX_LAG_MS ?? 5000),
    redisUrl: raw.REDIS_URL ?? 'redis://127.0.0.1:6379',
    redisClusterNodes: raw.REDIS_CLUSTER_NODES ? clusterNodes(raw.REDIS_CLUSTER_NODES) : null,
    appEnv,
    isSandbox: appEnv === 'sandbox',
    publicBaseUrl: (raw.PUBLIC_BASE_URL ?? `http://localhost:${port}`).replace(/\/$/, ''),
    callbackRetryDelaysMs: (raw.CALLBACK_RETRY_DELAYS_MS ?? DEFAULT_CALLBACK_RETRY_DELAYS_MS).split(',').map(Number),
    sandboxSettleDelayMs: Number(raw.SANDBOX_SETTLE_DELAY_MS ?? 2000),
    sandboxMinuteMs: Number(raw.SANDBOX_MINUTE_MS ?? 60000),
    outboxLostJobAfterMs: Number(raw.OUTBOX_LOST_JOB_AFTER_MS ?? 120000),
    fxMaxRateAgeMs: Number(raw.FX_MAX_RATE_AGE_MS ?? 7_200_000),
    payoutReconcileAfterMs: Number(raw.PAYOUT_RECONCILE_AFTER_MS ?? (appEnv === 'sandbox' ? 60000 : 900000)),
    reconMatchWindowMs: Number(raw.RECON_MATCH_WINDOW_MS ?? 600_000),
    reconDailyAtMinute: utcMinute(raw.RECON_DAILY_AT ?? '02:00'),
    // Sized for a 2-core machine where Postgres shares the CPU.
    dbPoolSize: raw.DB_POOL_SIZE ?? 20,
    portalIdleTimeoutMs: Number(raw.PORTAL_IDLE_TIMEOUT_MS ?? 1_800_000),
    callbackSecretOverlapMs: Number(raw.CALLBACK_SECRET_OVERLAP_MS ?? 86_400_000),
    callbackLeaseMs: Number(raw.CALLBACK_LEASE_MS ?? 60000),
    trustedProxies: (raw.TRUSTED_PROXIES ?? '')
      .split(',')
      .map((p) => p.trim())
      .filter(Boolean),
    docsEnabled: raw.DOCS_ENABLED ? raw.DOCS_ENABLED === 'true' : appEnv === 'sandbox',
    metricsToken: raw.METRICS_TOKEN ?? null,
    gatewayRateLimitPerMinute: Number(raw.GATEWAY_RATE_LIMIT_PER_MINUTE ?? 60000),
    loginRateLimitPerMinute: Number(raw.LOGIN_RATE_LIMIT_PER_MINUTE ?? 10),
    loginIpRateLimitPerMinute: Number(raw.LOGIN_IP_RATE_LIMIT_PER_MINUTE ?? 60),
    jwtSecret: raw.JWT_SECRET ?? null,
    logLevel: raw.LOG_LEVEL ?? 'info',
    adminUsername: raw.ADMIN_USERNAME ?? 'admin',
    adminPassword: raw.ADMIN_PASSWORD ?? null,
    shutdownGraceMs: Number(raw.SHUTDOWN_GRACE_MS ?? (appEnv === 'sandbox' ? 1000 : 10000)),
    issuerName: raw.ISSUER_NAME ?? 'Paygate',
  };
}

function clusterNodes(value: string): Array<{ host: string; port: number }> {
  return value.split(',').map((seed) => {
    const [host, port] = seed.trim().split(':');
    if (Number(port) < 1 || Number(port) > 65535) {
      throw new ConfigError(`Invalid configuration: REDIS_CLUSTER_NODES names port ${port} (of ${seed.trim()}), outside 1 to 65535`);
    }
    return { host, port: Number(port) };
  });
}

/** Minutes after midnight of an `HH:MM` (validated above), or null for `off`. */
function utcMinute(at: string): number | null {
  if (at === 'off') return null;
  const [hours, minutes] = at.split(':').map(Number);
  return hours * 60 + minutes;
}

function pick(env: NodeJS.ProcessEnv): Record<string, string | undefined> {
  const keys = [
    'PORT',
    'HOST',
    'DATABASE_URL',
    'DATABASE_READ_URL',
    'DATABASE_READ_MAX_LAG_MS',
    'REDIS_URL',
    'REDIS_CLUSTER_NODES',
    'APP_ENV',
    'PUBLIC_BASE_URL',
    'CALLBACK_RETRY_DELAYS_MS',
    'SANDBOX_SETTLE_DELAY_MS',
    'SANDBOX_MINUTE_MS',
    'OUTBOX_LOST_JOB_AFTER_MS',
    'PAYOUT_RECONCILE_AFTER_MS',
    'RECON_MATCH_WINDOW_MS',
    'RECON_DAILY_AT',
    'FX_MAX_RATE_AGE_MS',
    'DB_POOL_SIZE',
    'PORTAL_IDLE_TIMEOUT_MS',
    'CALLBACK_SECRET_OVERLAP_MS',
    'CALLBACK_LEASE_MS',
    'TRUSTED_PROXIES',
    'DOCS_ENABLED',
    'METRICS_TOKEN',
    'GATEWAY_RATE_LIMIT_PER_MINUTE',
    'LOGIN_RATE_LIMIT_PER_MINUTE',
    'LOGIN_IP_RATE_LIMIT_PER_MINUTE',
    'JWT_SECRET',
    'LOG_LEVEL',
    'ADMIN_USERNAME',
    'ADMIN_PASSWORD',
    'SHUTDOWN_GRACE_MS',
    'ISSUER_NAME',
  ];
  return Object.fromEntries(keys.filter((k) => env[k] !== undefined && env[k] !== '').map((k) => [k, env[k]]));
}
