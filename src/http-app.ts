import { HttpException, HttpStatus, INestApplication } from '@nestjs/common';
import type { ConnectionError, FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import helmet from 'helmet';
import type { Socket } from 'node:net';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { Logger } from 'nestjs-pino';
import { rootModule, ProcessRole } from './app.module';
import { mountQueueDashboard } from './infra/queue/queue-dashboard';
import {
  errorResponse,
  FallbackErrorFilter,
  HOSTED_PAGE_EARLY_REFUSAL,
  sendFallbackError,
  STATEMENT_EARLY_REFUSAL,
  type EarlyRefusalBody,
} from './common/errors/http-error.filter';
import { AIRTIME_EARLY_REFUSAL } from './airtime/airtime-error.filter';
import { PAYOUT_EARLY_REFUSAL } from './payout-requests/payout-error.filter';
import { APP_CONFIG, loadConfig, type AppConfig, type EnvironmentConfig } from './infra/config/app-config';
import { parseFormBody, parseJsonBody } from './common/http/body-parsers';
import { createValidationPipe } from './common/http/validation';
import { GATEWAY_SECURITY, WALLET_SECURITY } from './common/openapi/api-docs';
import { EngineMetrics } from './infra/metrics/engine-metrics';

/** Route families whose bodies refused before the route runs are answered in their own shape. */
const EARLY_REFUSALS: EarlyRefusalBody[] = [
  PAYOUT_EARLY_REFUSAL,
  AIRTIME_EARLY_REFUSAL,
  STATEMENT_EARLY_REFUSAL,
  HOSTED_PAGE_EARLY_REFUSAL,
];

/** The Fastify adapter every HTTP process uses (tests that override providers build their app on it too). */
export function createHttpAdapter(config: Pick<EnvironmentConfig, 'trustedProxies'> = loadConfig()): FastifyAdapter {
  const adapter = new FastifyAdapter({
    bodyLimit: 1_048_576,
    // X-Forwarded-For is believed only from the proxies the operator names (TRUSTED_PROXIES); otherwise the
    // client address is the socket's, so a caller cannot pick the address rate limits count against.
    trustProxy: config.trustedProxies.length > 0 ? config.trustedProxies : false,
    // Long path parameters reach the handlers (and get their 404 in the route's error shape), not Fastify's 414.
    routerOptions: { maxParamLength: 1000 },
    // Errors Fastify raises before any route runs are answered by the fallback filter's rules (the path tells the shape).
    frameworkErrors: (error: FastifyError, request: FastifyRequest, reply: FastifyReply) =>
      sendFallbackError(reply, error, request.url, EARLY_REFUSALS),
    clientErrorHandler: answerClientError,
  });
  const fastify = adapter.getInstance();
  // Merchant APIs speak JSON only: any other body type is a 415, not a string handed to validation.
  fastify.removeContentTypeParser('text/plain');
  // JSON with its numbers kept exact, and forms, both refusing bytes that are not UTF-8. Registered through the
  // adapter, which then leaves out the parsers Nest would otherwise put in their place at start-up.
  const { bodyLimit } = fastify.initialConfig;
  for (const [type, parse] of [
    ['application/json', parseJsonBody],
    ['application/x-www-form-urlencoded', parseFormBody],
  ] as const) {
    adapter.useBodyParser(type, false, { bodyLimit }, (_request, body, done) => {
      try {
        done(null, parse(body));
      } catch (error) {
        done(error as Error, undefined);
      }
    });
  }
  fastify.addHook('onRequest', async (request, reply) => {
    if (request.url.length > MAX_URL_LENGTH)
      sendFallbackError(reply, new HttpException('URI is too long', HttpStatus.URI_TOO_LONG), request.url, EARLY_REFUSALS);
  });
  return adapter;
}

/** Longer request targets are refused with 414; Node itself refuses a request head over 16 KiB. */
const MAX_URL_LENGTH = 8192;

/**
 * Requests Node's HTTP parser refuses never reach Fastify's routing (a head over 16 KiB, malformed syntax): they
 * are answered here, on the socket, in the shape of the interface the request line names.
 */
function answerClientError(error: ConnectionError, socket: Socket): void {
  if (!socket.writable) return;
  // Typed as a JSON'd Buffer; at run time it is the Buffer itself.
  const head = Buffer.isBuffer(error.rawPacket) ? error.rawPacket.toString('latin1') : '';
  const requestLine = head.split('\r\n')[0];
  const url = requestLine.split(' ')[1] ?? '/';
  const overflow = error.code === 'HPE_HEADER_OVERFLOW';
  const status = overflow ? (head.includes('\r\n') ? 431 : HttpStatus.URI_TOO_LONG) : HttpStatus.BAD_REQUEST;
  const message = {
    400: 'The request is malformed',
    414: 'URI is too long',
    431: 'Request headers are too large',
  }[status as 400 | 414 | 431];
  const body = JSON.stringify(errorResponse(new HttpException(message, status), url, EARLY_REFUSALS).body);
  socket.end(
    `HTTP/1.1 ${status} ${message}\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\n` +
      `x-content-type-options: nosniff\r\nconnection: close\r\n\r\n${body}`,
  );
}

/** Routes whose answers carry tokens or money: never stored by a browser or a shared cache. */
const NO_STORE = /^\/(api\/|v1\/|v2\/|transactions\/)/;

/**
 * Security headers: nosniff and the other helmet defaults everywhere, HSTS in production; each page sets its own
 * Content-Security-Policy (the checkout page's carries a nonce), so helmet's is off. helmet's middleware is built
 * once here (the @fastify/helmet plugin built it anew on every request, which cost more than the headers).
 */
function registerSecurityHeaders(app: NestFastifyApplication, config: AppConfig): void {
  const securityHeaders = helmet({
    contentSecurityPolicy: false,
    hsts: config.isSandbox ? false : { maxAge: 31_536_000, includeSubDomains: true },
  });
  const fastify = app.getHttpAdapter().getInstance();
  fastify.addHook('onRequest', (request, reply, done) => securityHeaders(request.raw, reply.raw, () => done()));
  fastify.addHook('onSend', (request, reply, payload, done) => {
    if (NO_STORE.test(request.url)) void reply.header('cache-control', 'no-store');
    done(null, payload);
  });
}

/**
 * Latency and count of every answer by route pattern and status (a URL no route matched counts as `unmatched`, so
 * probing random paths cannot grow the label set).
 */
function registerHttpMetrics(app: NestFastifyApplication): void {
  const metrics = app.get(EngineMetrics);
  app
    .getHttpAdapter()
    .getInstance()
    .addHook('onResponse', (request, reply, done) => {
      metrics.httpRequest(request.method, request.routeOptions.url ?? 'unmatched', reply.statusCode, reply.elapsedTime / 1000);
      done();
    });
}

/** Filters, pipes, API docs and the queue dashboard on a created application; then initialises it. */
export async function configureHttpApp<T extends INestApplication>(app: T): Promise<T> {
  const config = app.get<AppConfig>(APP_CONFIG);
  registerSecurityHeaders(app as unknown as NestFastifyApplication, config);
  registerHttpMetrics(app as unknown as NestFastifyApplication);
  app.useLogger(app.get(Logger));
  // Routes render errors through their interface's filter; this one answers what never reaches a controller.
  app.useGlobalFilters(new FallbackErrorFilter(EARLY_REFUSALS));
  app.useGlobalPipes(createValidationPipe());
  app.enableShutdownHooks();

  if (config.docsEnabled) {
    const document = SwaggerModule.createDocument(
      app,
      new DocumentBuilder()
        .setTitle('Payments provider API')
        .setDescription(
          'Wallet service (/api/v1): log in with POST /api/v1/auth/login and authorize `wallet-jwt` with the access_token. ' +
            'Collection and disbursement gateways (/v1, /v2, /transactions/acknowledge): get a token from POST /v1/auth and ' +
            'authorize `gateway-token` (sent as x-access-token) or `gateway-bearer` (sent as Authorization: Bearer).',
        )
        .setVersion('1')
        // Relative first: Swagger UI's "Try it out" then calls the origin the page came from, whatever the address.
        .addServer('/', 'the server that serves this document')
        .addServer(config.publicBaseUrl, 'PUBLIC_BASE_URL')
        .addBearerAuth(
          {
            type: 'http',
            scheme: 'bearer',
            bearerFormat: 'JWT',
            description: 'access_token of POST /api/v1/auth/login',
          },
          WALLET_SECURITY,
        )
        .addApiKey(
          {
            type: 'apiKey',
            in: 'header',
            name: 'x-access-token',
            description: 'access_token of POST /v1/auth',
          },
          GATEWAY_SECURITY.header,
        )
        .addBearerAuth(
          {
            type: 'http',
            scheme: 'bearer',
            bearerFormat: 'JWT',
            description: 'the same gateway token, as Authorization: Bearer',
          },
          GATEWAY_SECURITY.bearer,
        )
        .build(),
    );
    // An operation that names no scheme says so: without `security: []` a generated client or linter reads it as
    // unspecified rather than open.
    for (const operations of Object.values(document.paths)) {
      for (const method of ['get', 'put', 'post', 'delete', 'patch'] as const) {
        const operation = operations[method];
        if (operation && !operation.security) operation.security = [];
      }
    }
    SwaggerModule.setup('docs', app, document, {
      jsonDocumentUrl: 'docs-json',
      swaggerOptions: { persistAuthorization: true },
    });
    // The server's root leads a visitor to what it serves.
    (app as unknown as NestFastifyApplication)
      .getHttpAdapter()
      .getInstance()
      .get('/', (_request, reply) => reply.redirect('/docs'));
  }
  await mountQueueDashboard(app as unknown as NestFastifyApplication, config);
  await app.init();
  await (app as unknown as NestFastifyApplication).getHttpAdapter().getInstance().ready();
  return app;
}

/**
 * Builds the HTTP application for a role that serves HTTP (api, sandbox); shared by main.ts and the tests, which may
 * pass an adapter carrying hooks of their own.
 */
export async function createHttpApp(
  role: Exclude<ProcessRole, 'worker'> = 'api',
  adapter: FastifyAdapter = createHttpAdapter(),
): Promise<NestFastifyApplication> {
  const app = await NestFactory.create<NestFastifyApplication>(rootModule(role), adapter, { bufferLogs: true });
  return configureHttpApp(app);
}
