/**
 * The raw-body doctor: explains why a delivery failed verification (re-serialised JSON, a charset
 * conversion, form encoding, a trailing newline, a secret in another form or environment, a
 * skewed clock) and what to change for the framework in use. It never accepts a refused delivery.
 */
export { createDoctor } from './create-doctor.js';
export type { Doctor, CreateDoctorOptions } from './create-doctor.js';
export { diagnose, MAX_HMACS } from './diagnose.js';
export type { DiagnoseContext, DiagnoseInput } from './diagnose.js';
export { DAMAGES } from './damages.js';
export type { DamageKind, DamageSpec, BodyDamage, SecretDamage } from './damages.js';
export { describeDiagnosis } from './diagnosis.js';
export type { Diagnosis } from './diagnosis.js';
export { normalizeDoctorOptions } from './doctor-options.js';
export type { DoctorOptions, NormalizedDoctorOptions } from './doctor-options.js';
export { RAW_BODY_FIX, guessFramework } from './frameworks.js';
export type { Framework } from './frameworks.js';
export { explainRejection, KEPT_BODY_BYTES } from './explain-rejection.js';
