import { errorObject, type ErrorObject } from '../schemas/index.js';

/** An error answer of the sandbox: status plus the spec's error object (contract 3g). */
export class SandboxHttpError extends Error {
  override name = 'SandboxHttpError';
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }

  get body(): ErrorObject {
    return errorObject(this.code, this.message);
  }
}

export const badRequest = (message: string) => new SandboxHttpError(400, 'invalid_request', message);
export const unauthorized = (message: string) => new SandboxHttpError(401, 'unauthorized', message);
export const forbidden = (message: string) => new SandboxHttpError(403, 'forbidden', message);
export const notFound = (message: string) => new SandboxHttpError(404, 'not_found', message);
export const unprocessable = (code: string, message: string) => new SandboxHttpError(422, code, message);
