import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { getDataSourceToken } from '@nestjs/typeorm';
import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { UsersService } from '../../src/auth/users.service';
import { ClientsService } from '../../src/clients/clients.service';
import { createCheckedApp } from './openapi-contract';

/** The real HTTP application on the run's database, its answers checked against its OpenAPI document; one per test file. */
export async function createTestApp(): Promise<NestFastifyApplication> {
  return createCheckedApp('api');
}

export function dataSource(app: NestFastifyApplication): DataSource {
  return app.get<DataSource>(getDataSourceToken());
}

export function uniqueCode(prefix = 'C'): string {
  return `${prefix}${randomBytes(5).toString('hex').toUpperCase()}`;
}

export interface TestTenant {
  clientId: string;
  clientCode: string;
  username: string;
  password: string;
  token: string;
  /** Authorization header value for the wallet API. */
  auth: string;
}

/** A fresh client with one wallet user, logged in. Every test builds its own tenants, so files run in parallel. */
export async function createTenant(app: NestFastifyApplication): Promise<TestTenant> {
  const clientCode = uniqueCode();
  const client = await app.get(ClientsService).create(clientCode, `Client ${clientCode}`);
  const username = `user-${clientCode.toLowerCase()}`;
  const password = 'correct horse battery';
  await app.get(UsersService).create(client.id, username, password);
  const res = await request(app.getHttpServer()).post('/api/v1/auth/login').send({ username, password }).expect(200);
  return { clientId: client.id, clientCode, username, password, token: res.body.access_token, auth: `Bearer ${res.body.access_token}` };
}

/** The app with the tenant under test and another one, whose resources the first must neither reach nor see. */
export async function appWithTenants(): Promise<{ app: NestFastifyApplication; tenant: TestTenant; other: TestTenant }> {
  const app = await createTestApp();
  return { app, tenant: await createTenant(app), other: await createTenant(app) };
}

/** How many rows of each table are the client's, one query each (a distributed table's count runs on its shard). */
export async function countsOf(app: NestFastifyApplication, clientId: string, tables: string[]): Promise<number[]> {
  return Promise.all(
    tables.map(async (table) => {
      const [row] = await dataSource(app).query(`SELECT count(*)::int AS n FROM ${table} WHERE client_id = $1`, [clientId]);
      return row.n as number;
    }),
  );
}

/**
 * Deadlocks Postgres has detected in the test database so far (statistics flushed first). A deadlock retried by the
 * application leaves no trace in its answers; tests of lock order compare this before and after.
 */
export async function deadlockCount(app: NestFastifyApplication): Promise<number> {
  await dataSource(app).query(`SELECT pg_stat_force_next_flush()`);
  await new Promise((resolve) => setTimeout(resolve, 50));
  const [row] = await dataSource(app).query(`SELECT deadlocks::int AS n FROM pg_stat_database WHERE datname = current_database()`);
  return row.n;
}
