import { ConfigError, loadConfig } from '../../../src/infra/config/app-config';

/** Start-up configuration (pure, no database): DB_POOL_SIZE is checked with the rest. */
const env = (extra: Record<string, string>) => ({ DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/paygate', ...extra });

describe('loadConfig: DB_POOL_SIZE', () => {
  it('defaults to 20 connections per process, also when set empty', () => {
    expect(loadConfig(env({})).dbPoolSize).toBe(20);
    expect(loadConfig(env({ DB_POOL_SIZE: '' })).dbPoolSize).toBe(20);
  });

  it.each([
    ['1', 1],
    ['10', 10],
    ['100', 100],
  ])('accepts %s', (value, expected) => {
    expect(loadConfig(env({ DB_POOL_SIZE: value })).dbPoolSize).toBe(expected);
  });

  it.each(['0', '101', '-1', '1.5', '1e1', ' 5', 'twenty', '20 '])('refuses %j at start-up, naming the variable', (value) => {
    expect(() => loadConfig(env({ DB_POOL_SIZE: value }))).toThrow(ConfigError);
    expect(() => loadConfig(env({ DB_POOL_SIZE: value }))).toThrow('DB_POOL_SIZE must be a whole number from 1 to 100');
  });
});

describe('loadConfig: HOST', () => {
  it('listens on loopback in sandbox and on every interface in production unless HOST says otherwise', () => {
    expect(loadConfig(env({})).host).toBe('127.0.0.1');
    expect(loadConfig(env({ APP_ENV: 'sandbox', HOST: '' })).host).toBe('127.0.0.1');
    expect(loadConfig(env({ APP_ENV: 'production', JWT_SECRET: 'x'.repeat(32) })).host).toBe('0.0.0.0');
    expect(loadConfig(env({ HOST: '0.0.0.0' })).host).toBe('0.0.0.0');
    expect(loadConfig(env({ APP_ENV: 'production', JWT_SECRET: 'x'.repeat(32), HOST: '10.0.0.7' })).host).toBe('10.0.0.7');
    expect(loadConfig(env({ HOST: '::' })).host).toBe('::');
  });

  it.each(['0.0.0.0:3000', 'http://0.0.0.0', 'a b'])('refuses %j at start-up, naming the variable', (value) => {
    expect(() => loadConfig(env({ HOST: value }))).toThrow(/HOST must be an address or host name/);
  });
});

describe('loadConfig: REDIS_CLUSTER_NODES', () => {
  it('is off unless set; when set, its seeds are the cluster to use', () => {
    expect(loadConfig(env({})).redisClusterNodes).toBeNull();
    expect(loadConfig(env({ REDIS_CLUSTER_NODES: '' })).redisClusterNodes).toBeNull();
    expect(loadConfig(env({ REDIS_CLUSTER_NODES: '10.0.0.1:7000, redis-b.internal:7001,redis-c:6379' })).redisClusterNodes).toEqual([
      { host: '10.0.0.1', port: 7000 },
      { host: 'redis-b.internal', port: 7001 },
      { host: 'redis-c', port: 6379 },
    ]);
  });

  it.each(['10.0.0.1', '10.0.0.1:', ':7000', '10.0.0.1:7000,', 'redis://10.0.0.1:7000', '10.0.0.1:7000;10.0.0.2:7000', 'a b:7000'])(
    'refuses %j at start-up, naming the variable',
    (value) => {
      expect(() => loadConfig(env({ REDIS_CLUSTER_NODES: value }))).toThrow(ConfigError);
      expect(() => loadConfig(env({ REDIS_CLUSTER_NODES: value }))).toThrow(/REDIS_CLUSTER_NODES must be a comma list of host:port seeds/);
    },
  );

  it.each(['10.0.0.1:0', '10.0.0.1:7000,10.0.0.2:65536'])('refuses a port outside 1 to 65535 in %j, naming the variable', (value) => {
    expect(() => loadConfig(env({ REDIS_CLUSTER_NODES: value }))).toThrow(/REDIS_CLUSTER_NODES names port \d+ .*outside 1 to 65535/);
  });
});

describe('loadConfig: DATABASE_READ_URL and DATABASE_READ_MAX_LAG_MS', () => {
  it('has no replica and a 5000 ms lag limit unless told', () => {
    expect(loadConfig(env({}))).toMatchObject({ databaseReadUrl: null, databaseReadMaxLagMs: 5000 });
    const replica = 'postgres://reader@10.0.0.8:5432/paygate';
    expect(loadConfig(env({ DATABASE_READ_URL: replica, DATABASE_READ_MAX_LAG_MS: '250' }))).toMatchObject({
      databaseReadUrl: replica,
      databaseReadMaxLagMs: 250,
    });
  });

  it('refuses a URL that is not postgres:// and a limit that is not a positive whole number, naming the variable', () => {
    expect(() => loadConfig(env({ DATABASE_READ_URL: 'mysql://10.0.0.8/paygate' }))).toThrow('DATABASE_READ_URL must be a postgres:// URL');
    for (const value of ['0', '-1', '1.5', 'five'])
      expect(() => loadConfig(env({ DATABASE_READ_MAX_LAG_MS: value }))).toThrow(
        'DATABASE_READ_MAX_LAG_MS must be a positive whole number of milliseconds',
      );
  });
});
