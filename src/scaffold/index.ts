/**
 * `checkout-kit init`, framework-free: copy `templates/` into a merchant backend by an explicit
 * `[source, destination]` map and add what the scaffold needs to its package.json.
 */
export { scaffold } from './scaffold.js';
export type { ScaffoldOptions, ScaffoldReport } from './scaffold.js';
export { TEMPLATE_FILES, templateFiles } from './template-files.js';
export { FRAMEWORK_SCAFFOLDS, FRAMEWORKS, WEB_FRAMEWORKS, DEFAULT_FRAMEWORK, parseFramework } from './frameworks.js';
export type { Framework, FrameworkScaffold } from './frameworks.js';
export { copyTemplates } from './copy-templates.js';
export type { CopyTemplatesOptions, CopyResult } from './copy-templates.js';
export { mergePackageJson, newPackageJson } from './merge-package-json.js';
export type { MergedPackageJson, PackageJsonChanges } from './merge-package-json.js';
export { packageRequirements, SCAFFOLD_SCRIPTS } from './package-requirements.js';
export type { PackageRequirements } from './package-requirements.js';
export { findKitPackage } from './package-root.js';
export type { KitPackage, KitManifest } from './package-root.js';
export { nextSteps } from './next-steps.js';
export { ScaffoldError } from './scaffold-error.js';
