import { Module } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { LoggerModule } from 'nestjs-pino';
import { APP_CONFIG, AppConfig } from '../config/app-config';

/**
 * pino logs; every line written during a request carries its request id (from X-Request-Id or generated, and
 * echoed back). Headers (credentials, tokens) and bodies are never logged.
 */
@Module({
  imports: [
    LoggerModule.forRootAsync({
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => ({
        pinoHttp: {
          level: config.logLevel,
          genReqId: (req, res) => {
            const incoming = req.headers['x-request-id'];
            const id = typeof incoming === 'string' && /^[\w.-]{1,64}$/.test(incoming) ? incoming : randomUUID();
            res.setHeader('x-request-id', id);
            return id;
          },
          customProps: (req) => ({ requestId: req.id }),
          autoLogging: { ignore: (req) => req.url?.startsWith('/health') ?? false },
          // A request is logged as its id, method and url, its answer as its status code: no header reaches a line,
          // so neither a credential nor a token sent (authorization, x-access-token) or set (the portal's session
          // cookie) can, and no redaction pass is needed on every line.
          serializers: {
            req: (req: { id: string; method: string; url: string }) => ({ id: req.id, method: req.method, url: req.url }),
            res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
          },
        },
      }),
    }),
  ],
})
export class LoggingModule {}
