import { RequestMethod } from '@nestjs/common';
import { GUARDS_METADATA, METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { ModulesContainer } from '@nestjs/core';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import request from 'supertest';
import { GatewayAuthGuard } from '../../src/auth/gateway/gateway-auth.guard';
import { IS_PUBLIC } from '../../src/auth/principal';
import { WalletAuthGuard } from '../../src/auth/wallet-auth.guard';
import { NO_REQUEST_BODY } from '../../src/common/openapi/api-docs';
import { createTestApp } from '../support/test-app';

interface Operation {
  summary?: string;
  tags?: string[];
  security?: Record<string, string[]>[];
  requestBody?: { content?: Record<string, { schema?: object }> };
  responses: Record<string, { content?: Record<string, { schema?: object }> }>;
  [extension: `x-${string}`]: unknown;
}
interface OpenApiDocument {
  paths: Record<string, Record<string, Operation>>;
  components: { securitySchemes: Record<string, { type: string; in?: string; name?: string; scheme?: string }> };
}

const BODY_METHODS = ['post', 'put', 'patch'];
/** Routes that only tell whether the process is up: no input to refuse, no token. */
const isProbe = (operation: Operation) => operation.tags?.includes('health') ?? false;
const hasSchema = (entry?: { content?: Record<string, { schema?: object }> }) =>
  Object.values(entry?.content ?? {}).some((media) => media.schema !== undefined);

/** Every documented route, with the token its guard asks for; read from the controllers, so new routes count too. */
function guardedRoutes(app: NestFastifyApplication): { key: string; scheme: 'gateway' | 'wallet' }[] {
  const routes: { key: string; scheme: 'gateway' | 'wallet' }[] = [];
  for (const module of app.get(ModulesContainer).values()) {
    for (const wrapper of module.controllers.values()) {
      const controller = wrapper.metatype as (new (...args: never[]) => unknown) | null;
      if (!controller) continue;
      const guards: unknown[] = Reflect.getMetadata(GUARDS_METADATA, controller) ?? [];
      const scheme = guards.includes(GatewayAuthGuard) ? 'gateway' : guards.includes(WalletAuthGuard) ? 'wallet' : null;
      if (!scheme) continue;
      const base: string = Reflect.getMetadata(PATH_METADATA, controller);
      for (const name of Object.getOwnPropertyNames(controller.prototype).filter((n) => n !== 'constructor')) {
        const handler = controller.prototype[name];
        const path: string | undefined = typeof handler === 'function' ? Reflect.getMetadata(PATH_METADATA, handler) : undefined;
        if (path === undefined || Reflect.getMetadata(IS_PUBLIC, handler)) continue;
        const method = RequestMethod[Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod].toLowerCase();
        const full = `/${[base, path].filter(Boolean).join('/')}`
          .replace(/\/+/g, '/')
          .replace(/\/$/, '')
          .replace(/:(\w+)/g, '{$1}');
        routes.push({ key: `${method} ${full}`, scheme });
      }
    }
  }
  return routes;
}

describe('OpenAPI document', () => {
  let app: NestFastifyApplication;
  let doc: OpenApiDocument;
  let operations: [string, Operation][];

  beforeAll(async () => {
    app = await createTestApp();
    doc = (await request(app.getHttpServer()).get('/docs-json').expect(200)).body;
    operations = Object.entries(doc.paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, operation]): [string, Operation] => [`${method} ${path}`, operation]),
    );
  });
  afterAll(async () => app.close());

  it('documents the merchant interfaces', () => {
    expect(operations.length).toBeGreaterThan(30);
  });

  it('gives every operation a summary', () => {
    expect(operations.filter(([, op]) => !op.summary?.trim()).map(([key]) => key)).toEqual([]);
  });

  it('gives every body-taking operation a request body schema, unless it is marked as taking none', () => {
    const missing = operations.filter(
      ([key, op]) => BODY_METHODS.includes(key.split(' ')[0]) && !op[NO_REQUEST_BODY] && !hasSchema(op.requestBody),
    );
    expect(missing.map(([key]) => key)).toEqual([]);
  });

  it('gives every operation a schema for its success response', () => {
    const missing = operations.filter(
      ([, op]) => !Object.entries(op.responses).some(([status, r]) => /^2\d\d$/.test(status) && hasSchema(r)),
    );
    expect(missing.map(([key]) => key)).toEqual([]);
  });

  it('gives every operation but the health probes at least one error response schema', () => {
    const missing = operations.filter(
      ([, op]) => !isProbe(op) && !Object.entries(op.responses).some(([status, r]) => /^4\d\d$/.test(status) && hasSchema(r)),
    );
    expect(missing.map(([key]) => key)).toEqual([]);
  });

  it('lets Swagger UI authorize with x-access-token (or a bearer token) for the gateways and a bearer JWT for the wallet service', () => {
    const schemes = doc.components.securitySchemes;
    expect(schemes['gateway-token']).toMatchObject({ type: 'apiKey', in: 'header', name: 'x-access-token' });
    expect(schemes['gateway-bearer']).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(schemes['wallet-jwt']).toMatchObject({ type: 'http', scheme: 'bearer' });
  });

  it('asks for the right token on every route behind a token, and for none elsewhere', () => {
    const expected = { gateway: [{ 'gateway-token': [] }, { 'gateway-bearer': [] }], wallet: [{ 'wallet-jwt': [] }] };
    const byKey = new Map(operations);
    const guarded = guardedRoutes(app).filter(({ key }) => byKey.has(key));
    expect(guarded.length).toBeGreaterThan(25);
    const wrong = guarded.filter(({ key, scheme }) => JSON.stringify(byKey.get(key)?.security) !== JSON.stringify(expected[scheme]));
    expect(wrong.map(({ key }) => key)).toEqual([]);
    const guardedKeys = new Set(guarded.map(({ key }) => key));
    const open = operations.filter(([key, op]) => !guardedKeys.has(key) && (op.security ?? []).length > 0);
    expect(open.map(([key]) => key)).toEqual([]);
  });

  it('documents error bodies in the shape of the interface the route belongs to', () => {
    const errorRef = (op: Operation, status: string) => JSON.stringify(op.responses[status]?.content?.['application/json']?.schema ?? {});
    for (const [key, op] of operations) {
      const path = key.split(' ')[1];
      if (path.startsWith('/api/v1/')) expect([key, errorRef(op, '401')]).toEqual([key, expect.stringContaining('WalletErrorBody')]);
      if (op.security?.some((s) => 'gateway-token' in s)) {
        expect([key, errorRef(op, '401')]).toEqual([key, expect.stringContaining('GatewayUnauthorizedBody')]);
      }
    }
  });
});
