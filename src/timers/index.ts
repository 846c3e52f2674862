/** Background timers shared by the receiver, the fulfillment engine and the sandbox. */
export { every } from './every.js';
