import { PassThrough } from 'node:stream';
import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { buildProgram, COMMANDS } from '../../src/cli/program.js';
import { EVENT_TYPES } from '../../src/schemas/index.js';
import { execCli } from '../support/cli.js';

/** Every command of the program, its options and arguments, found by walking it: a new one is checked too. */
function undescribed(program: Command): string[] {
  const missing: string[] = [];
  const walk = (command: Command, path: string) => {
    for (const sub of command.commands) {
      const name = `${path} ${sub.name()}`.trim();
      if (!sub.description()) missing.push(`command ${name}`);
      for (const option of sub.options) if (!option.description) missing.push(`option ${option.flags} of ${name}`);
      for (const argument of sub.registeredArguments) if (!argument.description) missing.push(`argument ${argument.name()} of ${name}`);
      walk(sub, name);
    }
  };
  walk(program, '');
  return missing;
}

describe('help text', () => {
  it('describes every command, option and argument', async () => {
    const io = { stdout: new PassThrough(), stderr: new PassThrough(), env: {}, cwd: process.cwd() };
    expect(undescribed(await buildProgram(io, () => {}))).toEqual([]);
  });

  it('each command module adds exactly the commands it is listed with (a command line loads only the module it names)', async () => {
    const io = { stdout: new PassThrough(), stderr: new PassThrough(), env: {}, cwd: process.cwd() };
    for (const module of COMMANDS) {
      const program = new Command();
      (await module.load())(program, io, () => {});
      expect(program.commands.map((command) => command.name())).toEqual(module.names);
    }
  });

  it("trigger's argument lists every event type, in EVENT_TYPES' order (the definition writes them out to load no schema)", async () => {
    const io = { stdout: new PassThrough(), stderr: new PassThrough(), env: {}, cwd: process.cwd() };
    const trigger = (await buildProgram(io, () => {})).commands.find((command) => command.name() === 'trigger');
    expect(trigger?.registeredArguments[0]?.description).toMatch(new RegExp(`: ${EVENT_TYPES.join(', ').replaceAll('.', '\\.')}$`));
  });

  it('payments --help and payments show --help say what each does', async () => {
    const cwd = process.cwd();
    const group = await execCli(['payments', '--help'], { cwd });
    expect(group.code).toBe(0);
    expect(group.stdout).toMatch(/^ {2}list \[options\] +the payments the store follows, newest first: order,$/m);
    expect(group.stdout).toMatch(/^ {2}show \[options\] <id> +one payment: its order, outcome, last news and handler/m);
    const show = await execCli(['payments', 'show', '--help'], { cwd });
    expect(show.code).toBe(0);
    expect(show.stdout).toMatch(/^Arguments:\n {2}id +the payment's id, order id, e-mail or event id \(see `checkout-kit\n +payments list`\)$/m);
    expect(show.stdout).toMatch(/^ {2}--json +JSON output$/m);
  });

  it('help of a command that does not exist names it, as the command line itself would, and exits 2', async () => {
    expect(await execCli(['help', 'evnts'], { cwd: process.cwd() })).toEqual({
      code: 2,
      stdout: '',
      stderr: "error: unknown command 'evnts'\n(Did you mean events?)\n",
    });
  });
});
