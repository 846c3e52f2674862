import type { Register } from '../register.js';

/**
 * `checkout-kit migrate`: bring the PostgreSQL store's schema (CHECKOUT_STORE) to this version.
 * Stores also migrate when they open; this command lets a deploy do it once, up front, and lets
 * instances run with `migrate: false` and a role that cannot change the schema.
 */
export const registerMigrate: Register = (program, io) => {
  program
    .command('migrate')
    .description("apply the store's pending schema migrations (CHECKOUT_STORE: postgres://… or an existing file:<dir>)")
    .option('--json', 'print the result as JSON')
    .action(async (options: { json?: boolean }) => (await import('../actions/migrate.js')).migrate(options, io));
};
