/** The end-to-end story on embedded defaults (`checkout-kit demo`, `npm run demo`). */
export { runDemo } from './run-demo.js';
export type { DemoOptions, DemoResult, DemoRow } from './run-demo.js';
export { DEMO_SCENARIOS, SCENARIO_STEPS, EXPECTED } from './scenarios.js';
export type { DemoScenario, DemoStep } from './scenarios.js';
