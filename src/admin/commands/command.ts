import { INestApplicationContext } from '@nestjs/common';
import { getDataSourceToken } from '@nestjs/typeorm';
import { Command } from 'commander';
import type { PoolClient } from 'pg';
import { DataSource } from 'typeorm';
import { ClientsService } from '../../clients/clients.service';
import { pgPool } from '../../infra/database/prepared';

/** A failure the operator can act on: printed as one line on stderr, exit code 1. */
export class CliError extends Error {}

/** What a command prints: with --json as one JSON object, without it as one line per key. */
export type Output = Record<string, unknown>;

/** Runs a command's action in an application context of its own and prints its output (buildProgram's caller). */
export type RunCommand = (action: (app: INestApplicationContext) => Promise<Output>, json: boolean) => Promise<void>;

/** Whether --json was given, before or after the command's name. */
export const json = (cmd: Command) => Boolean(cmd.optsWithGlobals().json);

export function dataSourceOf(app: INestApplicationContext): DataSource {
  return app.get<DataSource>(getDataSourceToken());
}

export function requireText(name: string, value: string, max: number): void {
  if (!value.trim() || value.length > max) throw new CliError(`--${name} must be 1 to ${max} characters`);
}

export async function requireClient(app: INestApplicationContext, code: string) {
  const client = await app.get(ClientsService).findByCode(code);
  if (!client) throw new CliError(`client ${code} not found`);
  return client;
}

/** One pooled connection for the time of `work`: for DDL that runs its own transactions on it. */
export async function withConnection<T>(app: INestApplicationContext, work: (db: PoolClient) => Promise<T>): Promise<T> {
  const db = await pgPool(dataSourceOf(app)).connect();
  try {
    return await work(db);
  } finally {
    db.release();
  }
}
