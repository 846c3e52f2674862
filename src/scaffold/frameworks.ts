import { ScaffoldError } from './scaffold-error.js';

/**
 * What each framework's scaffold is made of: its server files (the `[source in templates/,
 * destination]` pairs that differ from the fastify default), the packages they import, and the
 * scripts that run them. The keys are the `init --framework` values; fastify is the default.
 */
export interface FrameworkScaffold {
  /** One line for `init --help` and the README. */
  label: string;
  /** Files that only this framework's scaffold has; they replace the default's of the same destination. */
  files: ReadonlyArray<readonly [source: string, destination: string]>;
  /** Packages the server files import, at the ranges checkout-kit is tested with. */
  dependencies: readonly string[];
  devDependencies: readonly string[];
  /** Scripts that differ from the default ones. */
  scripts: Readonly<Record<string, string>>;
  /** Destinations of common files this scaffold leaves out. */
  omits?: readonly string[];
}

/** Files every framework but fastify shares: the framework-free wiring and a test of the real server. */
const SHOP: ReadonlyArray<readonly [string, string]> = [['frameworks/shop.ts', 'src/shop.ts']];
const SERVER_TEST: ReadonlyArray<readonly [string, string]> = [['frameworks/server.test.ts', 'test/webhook.test.ts']];

export const FRAMEWORK_SCAFFOLDS = {
  fastify: {
    label: 'fastify (default): src/server.ts with the checkoutWebhooks plugin',
    files: [
      ['src/server.ts', 'src/server.ts'],
      ['test/webhook.test.ts', 'test/webhook.test.ts'],
    ],
    dependencies: ['fastify'],
    devDependencies: [],
    scripts: {},
  },
  express: {
    label: 'Express 5: the webhook route mounted before express.json()',
    files: [['frameworks/express/server.ts', 'src/server.ts'], ...SHOP, ...SERVER_TEST],
    dependencies: ['express'],
    devDependencies: ['@types/express'],
    scripts: {},
  },
  hono: {
    label: 'Hono on @hono/node-server: the untouched Request to createWebHandler',
    files: [['frameworks/hono/server.ts', 'src/server.ts'], ...SHOP, ...SERVER_TEST],
    dependencies: ['hono', '@hono/node-server'],
    devDependencies: [],
    scripts: {},
  },
  next: {
    label: 'Next.js App Router: app/webhooks/checkout/route.ts and the checkout routes (run it in your Next.js app)',
    files: [
      ['frameworks/next/webhook-route.ts', 'app/webhooks/checkout/route.ts'],
      ['frameworks/next/checkout-route.ts', 'app/checkout/route.ts'],
      ['frameworks/next/return-route.ts', 'app/checkout/return/route.ts'],
      ...SHOP,
      ['frameworks/next/webhook.test.ts', 'test/webhook.test.ts'],
      // As create-next-app's resolves: the routes' imports carry no .js (skipped when the app has its own).
      ['frameworks/next/tsconfig.json', 'tsconfig.json'],
    ],
    // next, react and react-dom come with the merchant's Next.js app, at its own versions.
    dependencies: [],
    devDependencies: [],
    scripts: { dev: 'next dev' },
  },
  nest: {
    label: 'NestJS (Express platform): a controller, the app created with { rawBody: true }',
    files: [['frameworks/nest/server.ts', 'src/server.ts'], ['frameworks/nest/tsconfig.json', 'tsconfig.json'], ...SHOP, ...SERVER_TEST],
    dependencies: ['@nestjs/core', '@nestjs/common', '@nestjs/platform-express', 'reflect-metadata', 'rxjs'],
    devDependencies: [],
    scripts: {},
  },
  partner: {
    label: 'a partner platform on fastify (init --partner): tenants onboarded by POST /tenants, checkout per tenant, one webhook route for all',
    files: [
      ['partner/server.ts', 'src/server.ts'],
      ['partner/fulfillment.ts', 'fulfillment.ts'],
      ['test/webhook.test.ts', 'test/webhook.test.ts'],
      ['partner/tenants.test.ts', 'test/tenants.test.ts'],
    ],
    dependencies: ['fastify'],
    devDependencies: [],
    scripts: {},
    // `checkout-kit check` proves a merchant's backend; it has no partner scenarios yet.
    omits: ['.github/workflows/checkout-check.yml'],
  },
} as const satisfies Record<string, FrameworkScaffold>;

export type Framework = keyof typeof FRAMEWORK_SCAFFOLDS;

/** Every scaffold: the web frameworks, and the partner platform (on fastify). */
export const FRAMEWORKS = Object.keys(FRAMEWORK_SCAFFOLDS) as Framework[];

/** What `--framework` chooses from: `partner` is chosen with `init --partner`. */
export const WEB_FRAMEWORKS = FRAMEWORKS.filter((framework) => framework !== 'partner');

export const DEFAULT_FRAMEWORK: Framework = 'fastify';

/** `--framework` as given on the command line, checked. */
export function parseFramework(name: string): Framework {
  const key = name.trim().toLowerCase();
  if ((WEB_FRAMEWORKS as string[]).includes(key)) return key as Framework;
  throw new ScaffoldError(`Unknown framework "${name}": choose one of ${WEB_FRAMEWORKS.join(', ')}.`);
}
