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
