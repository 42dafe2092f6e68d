import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyReply, FastifyRequest } from 'fastify';
import OpenAPIResponseValidator from 'openapi-response-validator';
import type { OpenAPIV3 } from 'openapi-types';
import { createHttpAdapter, createHttpApp } from '../../src/http-app';

/**
 * Every answer of an application made by the shared helpers is checked against the OpenAPI document that same
 * application serves at /docs-json, as a generated client or a validating proxy would read it: a documented status
 * must carry a body its schema accepts, in a documented media type, and a success must be documented. Error
 * statuses a route does not list (a 503 of an outage, a 415 of a body that is not JSON) are the HTTP layer's and
 * are not checked. Violations are kept here and fail the running test (test/support/contract-check.ts).
 */
const violations: string[] = [];

/** The violations recorded since the last call. */
export function takeContractViolations(): string[] {
  return violations.splice(0);
}

type Document = OpenAPIV3.Document;
type Method = 'get' | 'put' | 'post' | 'delete' | 'patch';

class ResponseContract {
  private document: Document | null = null;
  private readonly validators = new Map<string, OpenAPIResponseValidator>();

  async load(app: NestFastifyApplication): Promise<void> {
    const answer = await app.inject({ method: 'GET', url: '/docs-json' });
    if (answer.statusCode === 200) this.document = answer.json();
  }

  check(request: FastifyRequest, reply: FastifyReply, payload: unknown): void {
    const route = request.routeOptions.url;
    if (!this.document || !route) return;
    const path = route.replace(/:(\w+)/g, '{$1}');
    const method = request.method.toLowerCase() as Method;
    const operation = this.document.paths[path]?.[method];
    if (!operation) return; // pages, probes of other tools, the document itself
    const where = `${request.method} ${path} → ${reply.statusCode}`;
    const status = String(reply.statusCode);
    const documented = (operation.responses[status] ?? operation.responses.default) as OpenAPIV3.ResponseObject | undefined;
    if (!documented) {
      if (status.startsWith('2')) violations.push(`${where}: status not documented (${Object.keys(operation.responses).join(', ')})`);
      return;
    }
    if (!documented.content) return;
    const mediaType = String(reply.getHeader('content-type') ?? '')
      .split(';')[0]
      .trim();
    if (!(mediaType in documented.content)) {
      violations.push(`${where}: media type ${mediaType || '(none)'} not documented (${Object.keys(documented.content).join(', ')})`);
      return;
    }
    if (mediaType !== 'application/json' || typeof payload !== 'string') return;
    const failure = this.validator(`${method} ${path}`, operation).validateResponse(status, JSON.parse(payload));
    if (failure) {
      for (const error of failure.errors) violations.push(`${where}: ${error.path ?? ''} ${error.message}`);
    }
  }

  private validator(key: string, operation: OpenAPIV3.OperationObject): OpenAPIResponseValidator {
    let validator = this.validators.get(key);
    if (!validator) {
      validator = new OpenAPIResponseValidator({
        responses: operation.responses as never,
        components: this.document?.components as never,
      });
      this.validators.set(key, validator);
    }
    return validator;
  }
}

/** createHttpApp, with every answer checked against the application's own document. */
export async function createCheckedApp(role: 'api' | 'sandbox' = 'api'): Promise<NestFastifyApplication> {
  const contract = new ResponseContract();
  const adapter = createHttpAdapter();
  adapter.getInstance().addHook('onSend', async (request, reply, payload) => {
    contract.check(request, reply, payload);
    return payload;
  });
  const app = await createHttpApp(role, adapter);
  await contract.load(app);
  return app;
}
