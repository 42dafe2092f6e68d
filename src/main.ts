import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { constants } from 'node:os';
import { Logger } from 'nestjs-pino';
import { rootModule, ProcessRole } from './app.module';
import { APP_CONFIG, AppConfig, ConfigError, loadConfig } from './infra/config/app-config';
import { createHttpApp } from './http-app';

async function main(): Promise<void> {
  const role = (process.argv[2] ?? 'api') as ProcessRole;
  if (!['api', 'worker', 'sandbox'].includes(role)) {
    throw new ConfigError(`Unknown process role "${role}": use api, worker or sandbox`);
  }
  const { shutdownGraceMs } = loadConfig(); // fail fast, before any connection is attempted
  exitAfterGrace(shutdownGraceMs);
  if (role === 'worker') {
    const app = await NestFactory.createApplicationContext(rootModule('worker'), { bufferLogs: true });
    app.useLogger(app.get(Logger));
    app.enableShutdownHooks();
    app.get(Logger).log('worker started');
    return;
  }
  const app = await createHttpApp(role);
  const config = app.get<AppConfig>(APP_CONFIG);
  await app.listen({ port: config.port, host: config.host });
  app.get(Logger).log(`${role} listening on ${config.publicBaseUrl}`);
}

/**
 * Nest's shutdown hooks close the HTTP server, the queues and the database pool on a signal. While Redis is away,
 * BullMQ's worker close waits for a connection that never becomes ready, so it would hang until killed: after the
 * grace period the process exits whatever is still closing. Nothing is lost: every job is held in Postgres (outbox)
 * and an interrupted database transaction rolls back.
 */
function exitAfterGrace(graceMs: number): void {
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(signal, () => setTimeout(() => process.exit(128 + constants.signals[signal]), graceMs).unref());
  }
}

main().catch((error) => {
  if (error instanceof ConfigError) {
    process.stderr.write(`${error.message}\n`);
  } else {
    process.stderr.write(`Fatal: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  }
  process.exit(1);
});
