import { resolve } from 'node:path';
import { DEFAULT_FRAMEWORK, parseFramework, scaffold, ScaffoldError, type ScaffoldReport } from '../../scaffold/index.js';
import { UsageError } from '../exit.js';
import { output, type CliIO } from '../io.js';

export interface InitFlags {
  force?: boolean;
  json?: boolean;
  framework: string;
  partner?: boolean;
}

const list = (entries: Record<string, string>) =>
  Object.entries(entries)
    .map(([name, value]) => `${name}@${value}`)
    .join(', ');

function envLines(env: NonNullable<ScaffoldReport['env']>): string[] {
  const lines: string[] = [];
  if (env.set.length > 0) lines.push(`  ${(env.created ? 'wrote' : 'updated').padEnd(11)} .env (${env.set.join(', ')} from ${env.credentials})`);
  else if (env.kept.length === 0) lines.push(`  unchanged   .env (it has the sandbox's values of ${env.credentials})`);
  if (env.kept.length > 0)
    lines.push(
      `  kept        .env's ${env.kept.join(', ')}: they differ from ${env.credentials}; \`checkout-kit sandbox --write-env\` (or init --force) sets the sandbox's`,
    );
  return lines;
}

function human(report: ScaffoldReport): string {
  const lines = [`checkout-kit init (${report.framework}): ${report.dir}${report.createdDir ? ' (created)' : ''}`];
  for (const file of report.files.written) lines.push(`  wrote       ${file}`);
  for (const file of report.files.overwritten) lines.push(`  overwrote   ${file}`);
  for (const file of report.files.skipped) lines.push(`  skipped     ${file} (exists; --force overwrites)`);
  for (const { file, kept } of report.files.withheld)
    lines.push(`  not written ${file} (it tests the scaffold's ${kept.join(' and ')}, and yours were kept; --force writes them all)`);

  const { action, added, kept, warnings } = report.packageJson;
  lines.push(`  ${action.padEnd(11)} package.json`);
  const scripts = Object.keys(added.scripts);
  if (scripts.length) lines.push(`    scripts: ${scripts.join(', ')}`);
  if (Object.keys(added.dependencies).length) lines.push(`    dependencies: ${list(added.dependencies)}`);
  if (Object.keys(added.devDependencies).length) lines.push(`    devDependencies: ${list(added.devDependencies)}`);
  if (kept.scripts.length) lines.push(`    kept your scripts: ${kept.scripts.join(', ')}`);
  if (kept.dependencies.length) lines.push(`    kept your versions of: ${kept.dependencies.join(', ')}`);
  for (const warning of warnings) lines.push(`  warning: ${warning}`);

  if (report.env) lines.push(...envLines(report.env));

  lines.push('', 'Next steps:', ...report.nextSteps.map((step, i) => `  ${i + 1}. ${step}`));
  return lines.join('\n');
}

/** `checkout-kit init [dir]`: scaffold a merchant backend into `dir`. */
export async function init(dir: string | undefined, options: InitFlags, io: CliIO): Promise<void> {
  let report: ScaffoldReport;
  try {
    const framework = parseFramework(options.framework);
    if (options.partner && framework !== DEFAULT_FRAMEWORK) throw new UsageError('init --partner scaffolds a fastify server: drop --framework.');
    report = await scaffold({
      dir: resolve(io.cwd, dir ?? '.'),
      force: options.force ?? false,
      cwd: io.cwd,
      framework: options.partner ? 'partner' : framework,
    });
  } catch (error) {
    // The target is not usable as given (a file, a broken package.json): a usage error, exit 2.
    if (error instanceof ScaffoldError) throw new UsageError(error.message, { cause: error });
    throw error;
  }
  output(io, options.json ?? false, report, human);
}
