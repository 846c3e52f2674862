import { appendFileSync } from 'node:fs';

/**
 * Print one scenario's figures (one line, for the CI log and the README's Reliability table) and,
 * when FAULTS_REPORT names a file, append them there as a JSON line.
 */
export function reportFigures(scenario: string, figures: Record<string, number | string | boolean>): void {
  const line = Object.entries(figures)
    .map(([name, value]) => `${name}=${value}`)
    .join(' ');
  console.log(`FAULTS ${scenario}: ${line}`);
  const file = process.env.FAULTS_REPORT;
  if (file) appendFileSync(file, `${JSON.stringify({ scenario, ...figures })}\n`);
}

/** A size from the environment (for a longer soak), else the default. */
export function sized(variable: string, fallback: number): number {
  const value = Number(process.env[variable]);
  return Number.isFinite(value) && value > 0 ? value : fallback;
}
