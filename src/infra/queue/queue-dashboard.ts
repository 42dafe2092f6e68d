import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { FastifyAdapter as BullBoardFastifyAdapter } from '@bull-board/fastify';
import { getQueueToken } from '@nestjs/bullmq';
import { Logger } from '@nestjs/common';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { Queue } from 'bullmq';
import { timingSafeEqual } from 'node:crypto';
import { AppConfig } from '../config/app-config';
import { ALL_QUEUES } from './queues';

export const QUEUE_DASHBOARD_PATH = '/admin/queues';

/**
 * The BullMQ dashboard (bull-board) at /admin/queues, behind the operator's Basic-auth credentials
 * (ADMIN_USERNAME / ADMIN_PASSWORD). Without a password it is not served at all.
 */
export async function mountQueueDashboard(app: NestFastifyApplication, config: AppConfig): Promise<void> {
  if (!config.adminPassword) {
    new Logger('QueueDashboard').warn(`ADMIN_PASSWORD is not set: the queue dashboard at ${QUEUE_DASHBOARD_PATH} is disabled`);
    return;
  }
  const serverAdapter = new BullBoardFastifyAdapter().setBasePath(QUEUE_DASHBOARD_PATH);
  createBullBoard({
    queues: ALL_QUEUES.map((name) => new BullMQAdapter(app.get<Queue>(getQueueToken(name)), { readOnlyMode: false })),
    serverAdapter,
  });
  const expected = `Basic ${Buffer.from(`${config.adminUsername}:${config.adminPassword}`).toString('base64')}`;
  const fastify = app.getHttpAdapter().getInstance();
  fastify.addHook('onRequest', async (request, reply) => {
    if (!request.url.startsWith(QUEUE_DASHBOARD_PATH)) return;
    const given = request.headers.authorization ?? '';
    const ok = given.length === expected.length && timingSafeEqual(Buffer.from(given), Buffer.from(expected));
    if (!ok) {
      await reply.header('www-authenticate', 'Basic realm="paygate operators"').code(401).send({ status: 401, message: 'Unauthorized' });
    }
  });
  await app.register(serverAdapter.registerPlugin() as never, { prefix: QUEUE_DASHBOARD_PATH });
}
