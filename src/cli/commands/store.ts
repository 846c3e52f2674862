import type { Register } from '../register.js';

/** `checkout-kit store check|backup|restore|copy`: the embedded store's soundness, an online copy of it and putting one back, and moving a shop to another store. */
export const registerStore: Register = (program, io, setExit) => {
  const store = program.command('store').description('check, back up and restore the embedded store, or copy a store to PostgreSQL');
  store
    .command('check')
    .description("SQLite's integrity check of the store file (exit 1 when damaged)")
    .option('--dir <dir>', 'the store folder (default: CHECKOUT_STORE)')
    .option('--json', 'JSON output')
    .action(async (options: { dir?: string; json?: boolean }) => (await import('../actions/store.js')).checkStore(options, io, setExit));
  store
    .command('backup')
    .description('write a consistent copy of the store to a file (safe while serve runs)')
    .argument('<file>', "where the copy goes, e.g. backups/store-2030-01-01.sqlite (its folder is created; never inside the store's own folder)")
    .option('--dir <dir>', 'the store folder (default: CHECKOUT_STORE)')
    .option('--force', 'replace a file already there')
    .option('--json', 'JSON output')
    .action(async (file: string, options: { dir?: string; force?: boolean; json?: boolean }) =>
      (await import('../actions/store.js')).backupStore(file, options, io),
    );
  store
    .command('restore')
    .description('put a backup in place as the store (stop serve, cron and the console first; the store it replaces is moved aside, whole)')
    .argument('<file>', 'a backup `store backup` wrote')
    .option('--dir <dir>', 'the store folder (default: CHECKOUT_STORE)')
    .option('--json', 'JSON output')
    .action(async (file: string, options: { dir?: string; json?: boolean }) => (await import('../actions/store.js')).restoreStoreFrom(file, options, io));
  store
    .command('copy')
    .description(
      'copy every event, run, payment, checkout and timeline into another store, e.g. from the embedded one to PostgreSQL (stop serve first; safe to run again)',
    )
    .requiredOption('--to <url>', 'the target store (postgres://…, file:<dir>)')
    .option('--from <url>', 'the source store (default: CHECKOUT_STORE)')
    .option('--json', 'JSON output')
    .action(async (options: { to: string; from?: string; json?: boolean }) => (await import('../actions/store.js')).copyStoreTo(options, io, setExit));
};
