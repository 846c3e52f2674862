/**
 * Development tools around the service: replay stored events, drive the sandbox through named
 * scenarios or send sample events, and capture real deliveries to discover how they are signed.
 * Framework-free: the CLI commands (`replay`, `trigger`, `capture`, `probe-signature`) are thin.
 */
export { deliverSigned } from './deliver-signed.js';
export type { SignedDeliveryTarget, SignedDeliveryInput, DeliveryResult } from './deliver-signed.js';
export { sendEvents } from './send-events.js';
export type { SendEventsOptions, SendReport } from './send-events.js';
export { selectEvents } from './select-events.js';
export type { EventSelection, SelectedEvents } from './select-events.js';
export { replayEvents } from './replay-events.js';
export type { ReplayOptions, ReplayResult, ReplayReport } from './replay-events.js';

export { SCENARIOS, SCENARIO_PLANS, isScenario } from './scenarios.js';
export type { ScenarioName, ScenarioPlan, SimulationStep, EventSuffix } from './scenarios.js';
export { readSandboxCredentials } from './sandbox-credentials.js';
export { sandboxEnv, sandboxMismatches } from './sandbox-env.js';
export type { SandboxMismatch } from './sandbox-env.js';
export { sandboxAnswers } from './sandbox-api.js';
export { driveSandbox } from './drive-sandbox.js';
export type { DriveSandboxOptions, DrivenResource } from './drive-sandbox.js';
export { runScenario } from './run-scenario.js';
export type { RunScenarioOptions, ScenarioReport } from './run-scenario.js';
export { triggerEvent } from './trigger-event.js';
export type { TriggerEventOptions, TriggerEventReport } from './trigger-event.js';
export { sampleEventOf, isKnownEventType } from './sample-event.js';

export { saveCapture } from './save-capture.js';
export type { CaptureInput } from './save-capture.js';
export { readCaptures } from './read-captures.js';
export type { ReadCapturesResult } from './read-captures.js';
export { CaptureFileSchema } from './capture-format.js';
export type { CaptureFile, CapturedDelivery } from './capture-format.js';
export { keyVariants, KEY_FORM_LABEL } from './key-variants.js';
export type { KeyForm, KeyVariant } from './key-variants.js';
export { probeCandidates } from './probe-candidates.js';
export type { ProbeCandidate } from './probe-candidates.js';
export { probeSignature } from './probe-signature.js';
export type { ProbeOptions, ProbeMatch, ProbeReport } from './probe-signature.js';
