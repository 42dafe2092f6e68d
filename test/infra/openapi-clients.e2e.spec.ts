import { createConfig, lintFromString } from '@redocly/openapi-core';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAPIResponseValidator from 'openapi-response-validator';
import request from 'supertest';
import ts from 'typescript';
import { APP_CONFIG, type AppConfig } from '../../src/infra/config/app-config';
import { runToEnd } from '../support/child-processes';
import { CLI_JS, IsolatedSandbox, ROOT, startIsolatedSandbox } from '../support/gateway-fixtures';

type Schema = {
  $ref?: string;
  example?: unknown;
  enum?: unknown[];
  properties?: Record<string, Schema>;
  items?: Schema;
};
interface Operation {
  requestBody?: { content: Record<string, { schema: Schema; examples?: Record<string, { value: object }> }> };
}
interface OpenApiDocument {
  servers?: { url: string }[];
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema> };
}

/** The body Swagger UI's "Try it out" fills in: the first named example, else each field's example. */
function exampleBody(doc: OpenApiDocument, operation: Operation): unknown {
  const media = operation.requestBody!.content['application/json'];
  const named = Object.values(media.examples ?? {})[0];
  if (named) return named.value;
  const build = (schema: Schema): unknown => {
    if (schema.$ref) return build(doc.components.schemas[schema.$ref.split('/').pop()!]);
    if (schema.example !== undefined) return schema.example;
    if (schema.enum) return schema.enum[0];
    if (schema.properties) {
      return Object.fromEntries(Object.entries(schema.properties).map(([name, property]) => [name, build(property)]));
    }
    if (schema.items) return [build(schema.items)];
    return undefined;
  };
  return build(media.schema);
}

/** The JSON bodies of the README's curl examples, by the documented path they are posted to. */
function readmeBodies(): { path: string; body: unknown }[] {
  // A shell splice such as "'$WALLET'" stands for a value the reader's earlier command printed.
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8').replace(/"'\$(\w+)'"/g, '"$1"');
  const prefixes: Record<string, string> = { BASE: '/api/v1', GW: '' };
  return [...readme.matchAll(/curl -s "?\$(BASE|GW)(\/[^\s"?]*)[^\n]*?-d '([^']*)'/g)].map(([, base, path, json]) => ({
    path: `${prefixes[base]}${path}`,
    body: JSON.parse(json),
  }));
}

/**
 * The document as machines read it: Redocly's linter, a generated TypeScript client, and Swagger UI's examples sent
 * as they are to a fresh sandbox seeded by `seed` (client DEMO, service CS1001, as the seed prints them).
 */
describe('OpenAPI document for generated clients', () => {
  let sandbox: IsolatedSandbox;
  let app: NestFastifyApplication;
  let doc: OpenApiDocument;
  let source: string;
  let seed: Record<string, string>;

  beforeAll(async () => {
    sandbox = await startIsolatedSandbox({ SANDBOX_SETTLE_DELAY_MS: '100' }, 'api');
    app = sandbox.app;
    const seeded = await runToEnd(process.execPath, [CLI_JS, 'seed', '--json'], { env: { ...process.env, DATABASE_URL: sandbox.db.url } });
    expect(seeded).toMatchObject({ code: 0 });
    seed = JSON.parse(seeded.stdout);
    const docs = await request(app.getHttpServer()).get('/docs-json').expect(200);
    source = docs.text;
    doc = docs.body;
  });
  afterAll(async () => sandbox?.close());

  it('passes Redocly lint (recommended rules) with no error', async () => {
    const problems = await lintFromString({
      source,
      absoluteRef: 'docs-json.json',
      config: await createConfig({ extends: ['recommended'] }),
    });
    const errors = problems.filter((p) => p.severity === 'error').map((p) => `${p.ruleId}: ${p.message} ${p.location[0]?.pointer}`);
    expect(errors).toEqual([]);
    expect(doc.servers?.map((server) => server.url)).toEqual(['/', app.get<AppConfig>(APP_CONFIG).publicBaseUrl]);
  });

  it('redirects the server root to the docs', async () => {
    const root = await request(app.getHttpServer()).get('/').expect(302);
    expect(root.headers.location).toBe('/docs');
  });

  it("sends Swagger UI's example bodies as the seeded client, and each is accepted", async () => {
    expect(seed).toMatchObject({ client_code: 'DEMO', service_code: 'CS1001' });
    const gatewayToken = (
      await request(app.getHttpServer())
        .post('/v1/auth')
        .send({ consumer_key: seed.consumer_key, consumer_secret: seed.consumer_secret })
        .expect(200)
    ).body.access_token;
    const walletToken = (
      await request(app.getHttpServer()).post('/api/v1/auth/login').send({ username: seed.username, password: seed.password }).expect(200)
    ).body.access_token;
    const tried: Record<string, number | string> = {};
    const routes: [string, string][] = [
      ['/v1/mobile-money/charge', gatewayToken],
      ['/v2/checkout/initiate', gatewayToken],
      ['/v1/payouts/initiate', gatewayToken],
      ['/v1/gw/airtime/send', gatewayToken],
      ['/api/v1/transactions?command=CREDIT', walletToken],
    ];
    for (const [route, token] of routes) {
      const operation = doc.paths[route.split('?')[0]].post;
      const answer = await request(app.getHttpServer())
        .post(route)
        .set('authorization', `Bearer ${token}`)
        .send(exampleBody(doc, operation) as object);
      tried[route] = answer.status < 300 ? answer.status : `${answer.status} ${answer.text}`;
    }
    expect(tried).toEqual({
      '/v1/mobile-money/charge': 200,
      '/v2/checkout/initiate': 200,
      '/v1/payouts/initiate': 200,
      '/v1/gw/airtime/send': 200,
      '/api/v1/transactions?command=CREDIT': 201,
    });
  });

  it("satisfies the document's request schemas with the README's bodies, as a validating proxy (Prism) checks them", () => {
    const problems = readmeBodies().flatMap(({ path, body }) => {
      const schema = doc.paths[path].post.requestBody!.content['application/json'].schema;
      // The validator of answers applies OpenAPI 3.0's schema rules (nullable, $ref to components) to any value.
      const validator = new OpenAPIResponseValidator({
        responses: { 200: { schema: schema as never } },
        components: doc.components as never,
      });
      return (validator.validateResponse(200, body)?.errors ?? []).map(
        (e: { path?: string; message: string }) => `${path}: ${e.path} ${e.message}`,
      );
    });
    expect(problems).toEqual([]);
  });

  it("generates TypeScript types (openapi-typescript) that the README's request bodies compile against", async () => {
    const bodies = readmeBodies();
    expect(bodies.length).toBeGreaterThanOrEqual(3);
    const dir = mkdtempSync(join(tmpdir(), 'paygate-client-'));
    try {
      // As the README tells a merchant: npx openapi-typescript <docs-json> -o paygate.d.ts
      writeFileSync(join(dir, 'docs.json'), source);
      const generated = await runToEnd(join(ROOT, 'node_modules', '.bin', 'openapi-typescript'), [
        join(dir, 'docs.json'),
        '-o',
        join(dir, 'paygate.d.ts'),
      ]);
      expect(generated).toMatchObject({ code: 0 });
      const checks = bodies.map(({ path, body }, i) => {
        const key = Object.keys(doc.paths).find((p) => p === path.split('?')[0]);
        expect([path, key]).toEqual([path, expect.any(String)]);
        return `const body${i}: RequestBody<'${key}'> = ${JSON.stringify(body)};\nvoid body${i};`;
      });
      writeFileSync(
        join(dir, 'bodies.ts'),
        `import type { paths } from './paygate';\n` +
          `type RequestBody<P extends keyof paths> = paths[P] extends { post: { requestBody?: { content: { 'application/json': infer B } } } } ? B : never;\n` +
          checks.join('\n'),
      );
      const program = ts.createProgram([join(dir, 'bodies.ts')], { strict: true, noEmit: true, skipLibCheck: false, types: [] });
      const diagnostics = ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
      expect(diagnostics).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
