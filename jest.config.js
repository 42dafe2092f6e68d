/** Jest runs the whole suite against a real Postgres and Redis; see test/support/global-setup.ts. */
module.exports = {
  rootDir: '.',
  testMatch: ['<rootDir>/test/**/*.spec.ts'],
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json' }] },
  testEnvironment: 'node',
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  setupFiles: ['reflect-metadata'],
  // Every answer of the shared helpers' apps is checked against the app's OpenAPI document (test/support/openapi-contract.ts).
  setupFilesAfterEnv: ['<rootDir>/test/support/contract-check.ts'],
  testTimeout: 60000,
  maxWorkers: 2,
};
