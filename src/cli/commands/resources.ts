import type { Command } from 'commander';
import type { ResourceKind } from '../../store/index.js';
import type { ResourceListFlags } from '../actions/resources.js';
import { storedId } from '../flags.js';
import type { CliIO } from '../io.js';
import type { Register } from '../register.js';

function registerResourceKind(program: Command, io: CliIO, kind: ResourceKind) {
  const command = program.command(`${kind}s`).description(`inspect ${kind}s the store follows`);
  command
    .command('list')
    .description(`the ${kind}s the store follows, newest first: order, outcome, who learned it, open or closed, last news`)
    .option('--open', 'only those still awaiting an outcome')
    .option('--limit <n>', 'at most this many', '100')
    .option('--json', 'JSON output')
    .action(async (options: ResourceListFlags) => (await import('../actions/resources.js')).listResources(kind, options, io));
  command
    .command('show')
    .description(`one ${kind}: its order, outcome, last news and handler runs with their errors`)
    .argument('<id>', `the ${kind}'s id, order id, e-mail or event id (see \`checkout-kit ${kind}s list\`)`, storedId)
    .option('--json', 'JSON output')
    .action(async (id: string, options: { json?: boolean }) => (await import('../actions/resources.js')).showResource(kind, id, options, io));
}

/** `checkout-kit payments …` and `checkout-kit invoices …` (`list`, `show <id>`): the resources the store follows. */
export const registerResources: Register = (program, io) => {
  registerResourceKind(program, io, 'payment');
  registerResourceKind(program, io, 'invoice');
};
