/** Partner platforms: one deployment that onboards its tenants as merchants and takes payments for all of them. */
export { onboardMerchant, OnboardInputSchema, type OnboardInput, type OnboardDeps, type OnboardResult } from './onboard-merchant.js';
