import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { Logger } from 'nestjs-pino';
import { rootModule, ProcessRole } from './app.module';
import { mountQueueDashboard } from './admin/queue-dashboard';
import { FallbackErrorFilter } from './common/errors/http-error.filter';
import { APP_CONFIG, type AppConfig } from './infra/config/app-config';
import { createValidationPipe } from './common/http/validation';
import { GATEWAY_SECURITY, WALLET_SECURITY } from './common/openapi/api-docs';

/** Builds the HTTP application for a role that serves HTTP (api, sandbox); shared by main.ts and the tests. */
export async function createHttpApp(role: Exclude<ProcessRole, 'worker'> = 'api'): Promise<NestFastifyApplication> {
  // Long path parameters reach the handlers (and get their 404 in the route's error shape), not Fastify's 414.
  const adapter = new FastifyAdapter({ bodyLimit: 1_048_576, trustProxy: true, routerOptions: { maxParamLength: 1000 } });
  // Merchant APIs speak JSON only: any other body type is a 415, not a string handed to validation.
  adapter.getInstance().removeContentTypeParser('text/plain');
  const app = await NestFactory.create<NestFastifyApplication>(rootModule(role), adapter, { bufferLogs: true });
  app.useLogger(app.get(Logger));
  // Routes render errors through their interface's filter; this one answers what never reaches a controller.
  app.useGlobalFilters(new FallbackErrorFilter());
  app.useGlobalPipes(createValidationPipe());
  app.enableShutdownHooks();

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
      .addBearerAuth(
        { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'access_token of POST /api/v1/auth/login' },
        WALLET_SECURITY,
      )
      .addApiKey(
        { type: 'apiKey', in: 'header', name: 'x-access-token', description: 'access_token of POST /v1/auth' },
        GATEWAY_SECURITY.header,
      )
      .addBearerAuth(
        { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'the same gateway token, as Authorization: Bearer' },
        GATEWAY_SECURITY.bearer,
      )
      .build(),
  );
  SwaggerModule.setup('docs', app, document, { jsonDocumentUrl: 'docs-json', swaggerOptions: { persistAuthorization: true } });
  await mountQueueDashboard(app, app.get<AppConfig>(APP_CONFIG));
  await app.init();
  await app.getHttpAdapter().getInstance().ready();
  return app;
}
