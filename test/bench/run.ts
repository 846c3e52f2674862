/**
 * `npm run bench`: every benchmark in one run, printed as a Markdown table for the README.
 * Figures are throughputs measured on this machine in this run; compare ratios, not absolutes.
 * Pass names to run only some: `npm run bench -- receiver reconcile`.
 */
interface BenchResult {
  name: string;
  eventsPerSec: number;
  note?: string;
}

const SUITES: Record<string, () => Promise<{ run(): Promise<BenchResult[]> }>> = {
  receiver: () => import('./receiver.bench.js'),
  store: () => import('./store.bench.js'),
  'store-memory': () => import('./store-memory.bench.js'),
  reconcile: () => import('./reconcile.bench.js'),
  postgres: () => import('./postgres.bench.js'),
  // The whole `checkout-kit serve` (receiver + fulfillment engine) against a stand-in service.
  serve: () => import('./serve.bench.js'),
  'serve-postgres': () => import('./serve-postgres.bench.js'),
  flush: () => import('./flush.bench.js'),
  'slow-handler': () => import('./slow-handler.bench.js'),
  // serve's acks with a reconcile pass, `events list` and the console beside it on one SQLite file.
  beside: () => import('./beside.bench.js'),
  // The console's search and list filters over 100,000 payments, SQLite and PostgreSQL, through serve --console.
  'console-search': () => import('./console-search.bench.js'),
  // `checkout-kit --version`, `--help` and `events list` (empty store), as the bin, beside `node -e 0`.
  'cli-startup': () => import('./cli-startup.bench.js'),
};

const wanted = process.argv.slice(2);
const rows: string[] = ['| benchmark | per second | note |', '|---|---:|---|'];
for (const [name, load] of Object.entries(SUITES)) {
  if (wanted.length > 0 && !wanted.includes(name)) continue;
  process.stderr.write(`bench: ${name}…\n`);
  try {
    for (const result of await (await load()).run()) {
      rows.push(`| ${result.name} | ${Math.round(result.eventsPerSec).toLocaleString('en-US')} | ${result.note ?? ''} |`);
    }
  } catch (error) {
    rows.push(`| ${name} | – | failed: ${(error as Error).message.split('\n')[0]} |`);
  }
}
console.log(rows.join('\n'));
