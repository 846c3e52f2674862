import 'reflect-metadata';
import type { ServerResponse } from 'node:http';
import { Controller, Inject, Module, Post, Req, Res, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { afterEach, describe, expect, it } from 'vitest';
import { createNodeHandler, type NodeWebhookHandler, type NodeWebhookRequest } from '../../../src/webhooks/index.js';
import { countingReceiver, expectDeliveryFlow, multibyteDelivery, post, storedIn } from '../receive/delivery-flow.js';

const WEBHOOK_HANDLER = Symbol('checkout webhook handler');

/**
 * The controller a merchant writes, with its decorators applied by hand: tsx and esbuild emit no
 * decorator metadata, so the handler is injected by an explicit token (@Inject), as it must be
 * wherever `emitDecoratorMetadata` is off.
 */
class WebhooksController {
  constructor(private readonly handler: NodeWebhookHandler) {}
  async receive(request: NodeWebhookRequest, response: ServerResponse): Promise<void> {
    await this.handler(request, response);
  }
}
Controller('webhooks')(WebhooksController);
Inject(WEBHOOK_HANDLER)(WebhooksController, undefined, 0);
const receive = Object.getOwnPropertyDescriptor(WebhooksController.prototype, 'receive')!;
Post('checkout')(WebhooksController.prototype, 'receive', receive);
Req()(WebhooksController.prototype, 'receive', 0);
Res()(WebhooksController.prototype, 'receive', 1);

function appModule(handler: NodeWebhookHandler) {
  class AppModule {}
  Module({ controllers: [WebhooksController], providers: [{ provide: WEBHOOK_HANDLER, useValue: handler }] })(AppModule);
  return AppModule;
}

const apps: INestApplication[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
});

async function start(handler: NodeWebhookHandler, options: { rawBody?: boolean }): Promise<string> {
  const app = await NestFactory.create(appModule(handler), { logger: false, ...options });
  apps.push(app);
  await app.listen(0, '127.0.0.1');
  return `${await app.getUrl()}/webhooks/checkout`;
}

describe('NestJS (platform-express) on a loopback port', () => {
  it('works with Nest’s default JSON parser when the app keeps the raw body ({ rawBody: true })', async () => {
    const { store, receiver, dispatched } = countingReceiver();
    const url = await start(createNodeHandler(receiver), { rawBody: true });

    await expectDeliveryFlow({ send: (body, headers) => post(url, body, headers), stored: storedIn(store) });
    await receiver.idle();
    expect(dispatched).toEqual(['evt_multibyte_1']);
  });

  it('refuses with a clear error naming the fix when Nest parsed the body and kept no raw body', async () => {
    const { store, receiver } = countingReceiver();
    const url = await start(createNodeHandler(receiver), {});

    const delivery = multibyteDelivery('evt_nest_parsed');
    const answer = await post(url, delivery.body, delivery.headers);
    expect(answer.status).toBe(500);
    const { error } = answer.body as { error: { code: string; message: string } };
    expect(error.code).toBe('raw_body_required');
    expect(error.message).toContain('already parsed');
    expect(error.message).toContain('NestFactory.create(AppModule, { rawBody: true })');
    expect(await store.listEvents()).toHaveLength(0);
  });
});
