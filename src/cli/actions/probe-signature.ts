import { resolve } from 'node:path';
import { KEY_FORM_LABEL, probeSignature, readCaptures, type ProbeMatch, type ProbeReport } from '../../devtools/index.js';
import { registerSecret } from '../../errors/index.js';
import { keyFormOf } from '../../webhooks/schemes/registry.js';
import { EXIT, UsageError } from '../exit.js';
import { output, writeLine, type CliIO } from '../io.js';

export interface ProbeFlags {
  secret: string;
  dir: string;
  json?: boolean;
}

function timestampLine(match: ProbeMatch): string {
  if (!match.timestampHeader) return 'signed timestamp: none (this scheme signs no time: replays are caught only by event-id dedupe)';
  const age = match.signedAgeSeconds;
  const span = age ? (age.min === age.max ? `${age.min} s` : `${age.min} to ${age.max} s`) : '?';
  return `signed timestamp: ${match.timestampHeader} (signed ${span} before capture; tolerance ignored while probing)`;
}

function describeMatch(match: ProbeMatch): string[] {
  const scheme = JSON.stringify(match.scheme);
  const lines = [
    `  scheme: ${scheme}`,
    `    key: ${KEY_FORM_LABEL[match.keyForm]}`,
    `    verifies ${match.verified}/${match.total} capture(s); ${timestampLine(match)}`,
  ];
  if (!match.usable) {
    lines.push(`    not configurable yet: the receiver's ${match.scheme.kind} scheme takes the key as ${KEY_FORM_LABEL[keyFormOf(match.scheme)]}`);
  } else if (match.scheme.kind === 'standard-webhooks') {
    lines.push('    configure: CHECKOUT_WEBHOOK_SECRET=<this secret> (Standard Webhooks is the default scheme; serve needs nothing else)');
  } else {
    lines.push(`    configure: CHECKOUT_WEBHOOK_SCHEME='${scheme}' CHECKOUT_WEBHOOK_SECRET=<this secret> (or createReceiver({ secrets, scheme: ${scheme} }))`);
  }
  return lines;
}

function human(report: ProbeReport & { dir: string }): string {
  const head = `probed ${report.captures} capture(s) in ${report.dir}: ${report.tried} configuration(s) tried`;
  if (report.matches.length > 0) {
    return [head, `match${report.matches.length > 1 ? 'es (best first)' : ''}:`, ...report.matches.flatMap(describeMatch)].join('\n');
  }
  const lines = [
    head,
    "no configuration verifies every capture with this secret: check the secret (the test endpoint's, copied whole), or capture fresh deliveries",
  ];
  if (report.partial.length > 0)
    lines.push('partial (some captures only: were they signed with different secrets?):', ...report.partial.flatMap(describeMatch));
  return lines.join('\n');
}

/** `checkout-kit probe-signature`: try every known scheme on the captures; exit 1 when none verifies them all. */
export async function probeSignatureOf(flags: ProbeFlags, io: CliIO, setExit: (code: number) => void): Promise<void> {
  registerSecret(flags.secret);
  const dir = resolve(io.cwd, flags.dir);
  const { captures, skipped } = await readCaptures(dir);
  for (const { file, reason } of skipped) writeLine(io.stderr, `checkout-kit: skipped ${file}: ${reason}`);
  if (captures.length === 0) throw new UsageError(`no captures in ${dir}: run \`checkout-kit capture\` and send it a test delivery first.`);
  const report = probeSignature({ captures, secret: flags.secret });
  output(io, flags.json ?? false, { dir, ...report, skipped }, human);
  if (report.matches.length === 0) setExit(EXIT.failures);
}
