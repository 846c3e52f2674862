/** Timers shared by the receiver, the fulfillment engine, the client, the checkout and the sandbox. */
export { deadline } from './deadline.js';
export { every } from './every.js';
export { unlessStuck } from './unless-stuck.js';
