import type { Register } from '../register.js';

export const registerDoctor: Register = (program, io, setExit) => {
  program
    .command('doctor')
    .description('check configuration, store, fulfillment module and connectivity')
    .option('--json', 'JSON output')
    .action(async (options: { json?: boolean }) => (await import('../actions/doctor.js')).doctor(options, io, setExit));
};
