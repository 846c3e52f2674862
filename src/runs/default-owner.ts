import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';

/** The lease owner written on runs and locks when none is given: `${hostname}:${pid}:${random}`. */
export const defaultOwner = (): string => `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
