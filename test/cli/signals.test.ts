import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup, openShop } from '../sandbox/helpers.js';
import { CLI_MAIN, sandboxEnv, TSX_LOADER } from '../support/cli.js';

const SIGNAL_AT_LISTENING = fileURLToPath(new URL('./fixtures/signal-at-listening.cjs', import.meta.url));

afterEach(async () => {
  await cleanup();
});

/** Run the CLI with a SIGTERM arriving the moment it announces where it listens; how did it end? */
function runSignalledAtListening(args: string[], cwd: string, env: Record<string, string>) {
  const child = spawn(process.execPath, ['--require', SIGNAL_AT_LISTENING, '--import', TSX_LOADER, CLI_MAIN, ...args], {
    cwd,
    env: { PATH: process.env.PATH, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>((resolve) =>
    child.once('close', (code, signal) => resolve({ code, signal, stdout, stderr })),
  );
}

describe('long-running commands and a SIGTERM as soon as they listen', () => {
  it('serve and console already listen for SIGTERM when they print where they listen, and close with exit 0', async () => {
    const { dir, sandbox } = await openShop('ck-signals-', 'export default { async paid() {} };\n');
    const env = sandboxEnv(sandbox);
    const serve = await runSignalledAtListening(['serve', '--port', '0'], dir, env);
    expect(serve, serve.stderr).toMatchObject({ code: 0, signal: null });
    expect(serve.stdout).toContain('checkout-kit serve listening on http://127.0.0.1:');

    const consoleRun = await runSignalledAtListening(['console', '--port', '0'], dir, env);
    expect(consoleRun, consoleRun.stderr).toMatchObject({ code: 0, signal: null });
    expect(consoleRun.stdout).toContain('checkout-kit console on http://127.0.0.1:');
  });
});
