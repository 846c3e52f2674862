// `npm test`: runs every stage named on the command line (`npm run <stage>`, one after the other),
// whatever the earlier ones gave, so a red test in the first stage cannot hide a later stage's
// result. Each stage's output goes straight through; at the end one line per stage says how it
// went, and the exit code is 1 when any stage failed (130 when interrupted).
import { spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { forwardSignals } from './support/child-signals.mjs';

const stages = process.argv.slice(2);
if (stages.length === 0) {
  console.error('usage: node test/run-stages.mjs <npm script>…');
  process.exit(2);
}

/** `npm run --silent <stage>` through the npm that runs us (npm_execpath), else the one on PATH. */
function runStage(stage) {
  const npm = process.env.npm_execpath;
  const [command, args] = npm ? [process.execPath, [npm, 'run', '--silent', stage]] : ['npm', ['run', '--silent', stage]];
  return spawn(command, args, { stdio: 'inherit' });
}

const steps = forwardSignals();

const results = [];
for (const stage of stages) {
  if (steps.interrupted) {
    results.push({ stage, line: 'not run (interrupted)', ok: false });
    continue;
  }
  console.log(`\n=== npm test: ${stage} ===`);
  const started = performance.now();
  steps.current = runStage(stage);
  const { code, signal } = await new Promise((resolve) => {
    steps.current.once('exit', (exitCode, exitSignal) => resolve({ code: exitCode, signal: exitSignal }));
    steps.current.once('error', (error) => resolve({ code: null, signal: null, error }));
  });
  steps.current = undefined;
  const seconds = Math.round((performance.now() - started) / 1000);
  const ok = code === 0;
  const how = ok ? 'passed' : signal ? `failed (stopped by ${signal})` : `failed (exit ${code ?? 'unknown: it did not start'})`;
  results.push({ stage, line: `${how} in ${seconds} s`, ok });
}

const width = Math.max(...stages.map((stage) => stage.length));
console.log('\nnpm test, stage by stage:');
for (const { stage, line } of results) console.log(`  ${stage.padEnd(width)}  ${line}`);
const failed = results.filter((result) => !result.ok).length;
console.log(failed === 0 ? `all ${results.length} stages passed` : `${failed} of ${results.length} stages failed`);
process.exit(steps.interrupted ? 130 : failed === 0 ? 0 : 1);
