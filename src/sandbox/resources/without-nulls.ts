/** `T` with its nullable fields made optional and never `null`. */
export type WithoutNulls<T> = { [K in keyof T as null extends T[K] ? never : K]: T[K] } & {
  [K in keyof T as null extends T[K] ? K : never]?: Exclude<T[K], null>;
};

/**
 * `value` without its `null` fields. The records keep `null` for "not given"; the spec types those
 * fields (payment `token`, `referenceId`, `email`, `successUrl`, `cancelUrl`, merchant
 * `liveRequestedAt`, `liveApprovedAt`) as strings, so a response omits them instead.
 */
export function withoutNulls<T extends object>(value: T): WithoutNulls<T> {
  return Object.fromEntries(Object.entries(value).filter(([, field]) => field !== null)) as WithoutNulls<T>;
}
