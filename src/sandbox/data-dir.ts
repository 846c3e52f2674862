/** Where a sandbox keeps its state and `credentials.json` unless told otherwise, relative to its working directory. */
export const DEFAULT_SANDBOX_DATA = '.sandbox';
