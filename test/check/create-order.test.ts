import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { createOrder } from '../../src/check/create-order.js';

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

describe("check's order through the backend's checkout route", () => {
  it('says in one line what a route that is not a checkout route answered (an error page over several lines)', async () => {
    app = Fastify();
    app.post('/checkout', async (_request, reply) =>
      reply
        .code(501)
        .type('text/html')
        .send(
          '<!DOCTYPE HTML>\n<html lang="en">\n    <head>\n        <title>Error response</title>\n    </head>\n    <body><p>Error code: 501</p></body>\n</html>\n',
        ),
    );
    const url = `${await app.listen({ host: '127.0.0.1', port: 0 })}/checkout`;
    const result = await createOrder(url, { orderId: 'order-1', amount: '25.00', email: 'buyer@example.com' });
    expect(result).toEqual({
      kind: 'failed',
      reason: `POST ${url} gave no checkoutUrl: answered 501: <!DOCTYPE HTML> <html lang="en"> <head> <title>Error response</title> </head> <body><p>Error code: 501</p></body> </html>`,
    });
  });
});
