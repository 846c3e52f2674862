import { findKitPackage } from '../scaffold/package-root.js';

/** This package's version, for `--version`: a missing manifest must not stop every command. */
export function kitVersion(): string {
  try {
    return findKitPackage(import.meta.url).manifest.version;
  } catch {
    return "unknown (checkout-kit's package.json was not found)";
  }
}

/** The flags that print the version (the program's `.version()` takes the same). */
export const VERSION_FLAGS: readonly string[] = ['-V', '--version'];
