import { createConfig, lintFromString } from '@redocly/openapi-core';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAPIResponseValidator from 'openapi-response-validator';
import request from 'supertest';
import ts from 'typescript';
import { DECIMAL_PATTERN } from '../../src/common/openapi/api-docs';
import { APP_CONFIG, type AppConfig } from '../../src/infra/config/app-config';
import { runToEnd } from '../support/child-processes';
import { CLI_JS, IsolatedSandbox, ROOT, startIsolatedSandbox } from '../support/gateway-fixtures';

type Schema = {
  $ref?: string;
  type?: string;
  pattern?: string;
  example?: unknown;
  enum?: unknown[];
  properties?: Record<string, Schema>;
  additionalProperties?: boolean | Schema;
  items?: Schema;
  oneOf?: Schema[];
  anyOf?: Schema[];
  allOf?: Schema[];
};
interface Operation {
  parameters?: { name: string; schema?: Schema }[];
  requestBody?: { content: Record<string, { schema: Schema; examples?: Record<string, { value: object }> }> };
  responses?: Record<string, { content?: Record<string, { schema?: Schema }> }>;
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

/** A field of the document: a property of a schema, or a parameter, on the side of the exchange it is read on. */
interface Field {
  where: string;
  /** The component schema the property belongs to (absent for inline schemas and parameters). */
  component?: string;
  property: string;
  schema: Schema;
  side: 'request' | 'answer';
}

/** Every field the document's operations reach, following $refs into the components, each once per side. */
function fieldsOf(doc: OpenApiDocument): Field[] {
  const fields: Field[] = [];
  const seen = new Set<string>();
  const walk = (schema: Schema | undefined, where: string, side: Field['side'], component?: string): void => {
    if (!schema) return;
    if (schema.$ref) {
      const name = schema.$ref.split('/').pop()!;
      if (seen.has(`${side} ${name}`)) return;
      seen.add(`${side} ${name}`);
      return walk(doc.components.schemas[name], name, side, name);
    }
    for (const [property, value] of Object.entries(schema.properties ?? {})) {
      fields.push({ where: `${where}.${property}`, component, property, schema: value, side });
      walk(value, `${where}.${property}`, side);
    }
    const inner = typeof schema.additionalProperties === 'object' ? [schema.additionalProperties] : [];
    for (const sub of [schema.items, ...(schema.oneOf ?? []), ...(schema.anyOf ?? []), ...(schema.allOf ?? []), ...inner]) {
      walk(sub, where, side);
    }
  };
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, operation] of Object.entries(methods)) {
      const at = `${method.toUpperCase()} ${path}`;
      for (const parameter of operation.parameters ?? []) {
        if (parameter.schema)
          fields.push({ where: `${at} ${parameter.name}`, property: parameter.name, schema: parameter.schema, side: 'request' });
      }
      for (const media of Object.values(operation.requestBody?.content ?? {})) walk(media.schema, `${at} body`, 'request');
      for (const response of Object.values(operation.responses ?? {})) {
        for (const media of Object.values(response.content ?? {})) walk(media.schema, `${at} answer`, 'answer');
      }
    }
  }
  return fields;
}

const isDecimalText = (schema: Schema) => schema.type === 'string' && schema.pattern === DECIMAL_PATTERN;
/** A money field, by the mark MoneyProperty gives every amount and rate: the decimal-text pattern, alone or as an alternative. */
const isMoney = (schema: Schema) => isDecimalText(schema) || [...(schema.oneOf ?? []), ...(schema.anyOf ?? [])].some(isDecimalText);
/** `number | string` in OpenAPI 3.0 (no type arrays): a number or a decimal string as the only alternatives. */
function isNumberOrDecimalText(schema: Schema): boolean {
  const alternatives = schema.oneOf ?? schema.anyOf ?? [];
  return (
    schema.type === undefined &&
    alternatives.length === 2 &&
    alternatives.some((a) => a.type === 'number') &&
    alternatives.some(isDecimalText)
  );
}
/** What an untyped field (`unknown` in a DTO) becomes: an object with no members, which generators type Record<string, never>. */
const isMemberlessObject = (schema: Schema) =>
  schema.type === 'object' && !schema.properties && !schema.additionalProperties && !schema.oneOf && !schema.anyOf && !schema.allOf;

/** A route's JSON request body as the generated types have it. */
const REQUEST_BODY =
  "type RequestBody<P extends keyof paths> = paths[P] extends { post: { requestBody?: { content: { 'application/json': infer B } } } } ? B : never;";

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
  /** Where the document and the types openapi-typescript generated from it (paygate.d.ts) are written. */
  let dir: string;

  beforeAll(async () => {
    sandbox = await startIsolatedSandbox({ SANDBOX_SETTLE_DELAY_MS: '100' }, 'api');
    app = sandbox.app;
    const seeded = await runToEnd(process.execPath, [CLI_JS, 'seed', '--json'], { env: { ...process.env, DATABASE_URL: sandbox.db.url } });
    expect(seeded).toMatchObject({ code: 0 });
    seed = JSON.parse(seeded.stdout);
    const docs = await request(app.getHttpServer()).get('/docs-json').expect(200);
    source = docs.text;
    doc = docs.body;
    dir = mkdtempSync(join(tmpdir(), 'paygate-client-'));
    // As the README tells a merchant: npx openapi-typescript <docs-json> -o paygate.d.ts
    writeFileSync(join(dir, 'docs.json'), source);
    const generated = await runToEnd(join(ROOT, 'node_modules', '.bin', 'openapi-typescript'), [
      join(dir, 'docs.json'),
      '-o',
      join(dir, 'paygate.d.ts'),
    ]);
    expect(generated).toMatchObject({ code: 0 });
  });
  afterAll(async () => {
    if (dir) rmSync(dir, { recursive: true, force: true });
    await sandbox?.close();
  });

  /** The compiler's complaints about a TypeScript file beside the generated types (none: it compiles). */
  function diagnosticsOf(name: string, code: string): string[] {
    writeFileSync(join(dir, name), `import type { components, paths } from './paygate';\n${code}`);
    const program = ts.createProgram([join(dir, name)], { strict: true, noEmit: true, skipLibCheck: false, types: [] });
    return ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
  }

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

  it("generates TypeScript types (openapi-typescript) that the README's request bodies compile against", () => {
    const bodies = readmeBodies();
    expect(bodies.length).toBeGreaterThanOrEqual(3);
    const checks = bodies.map(({ path, body }, i) => {
      const key = Object.keys(doc.paths).find((p) => p === path.split('?')[0]);
      expect([path, key]).toEqual([path, expect.any(String)]);
      return `const body${i}: RequestBody<'${key}'> = ${JSON.stringify(body)};\nvoid body${i};`;
    });
    expect(diagnosticsOf('bodies.ts', `${REQUEST_BODY}\n${checks.join('\n')}`)).toEqual([]);
  });

  it('types every money field a client sends number | string (a JSON number or a decimal string) and every one it reads decimal text', () => {
    const fields = fieldsOf(doc);
    const money = fields.filter((field) => isMoney(field.schema));
    const sent = money.filter((field) => field.side === 'request');
    expect(sent.map((field) => field.where)).toContain('CheckoutPayDto.amount');
    expect(sent.filter((field) => !isNumberOrDecimalText(field.schema)).map((field) => field.where)).toEqual([]);
    expect(money.filter((field) => field.side === 'answer' && !isDecimalText(field.schema)).map((field) => field.where)).toEqual([]);
    // A field typed `unknown` in its DTO is a member-less object in the document: a client could send no value to it.
    expect(fields.filter((field) => field.side === 'request' && isMemberlessObject(field.schema)).map((field) => field.where)).toEqual([]);

    // What openapi-typescript makes of each: exactly number | string sent, string read.
    const typed = (field: Field) => `NonNullable<components['schemas']['${field.component}']['${field.property}']>`;
    expect(money.filter((field) => !field.component).map((field) => field.where)).toEqual([]);
    const checks = money.map(
      (field, i) =>
        `const money${i}: Exact<${typed(field)}, ${field.side === 'request' ? 'number | string' : 'string'}> = true;\nvoid money${i};`,
    );
    const code = `${REQUEST_BODY}
type Exact<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
${checks.join('\n')}
const byNumber: RequestBody<'/checkout/{reference}/pay'> = { msisdn: '254712345678', amount: 1500 };
const byText: RequestBody<'/checkout/{reference}/pay'> = { msisdn: '254712345678', amount: '1500' };
void [byNumber, byText];`;
    expect(diagnosticsOf('money.ts', code)).toEqual([]);
  });
});
