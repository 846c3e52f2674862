// The linter of src/, test/, templates/ and .ci/ (`npm run lint`, run by CI): typescript-eslint's
// recommended rules, and what the codebase already holds to. Formatting is prettier's.
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/**', 'dist/**', '.assets/**', '**/*.d.ts'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { ecmaVersion: 2023, sourceType: 'module', globals: { ...globals.node, ...globals.browser } },
    rules: {
      // Control characters are matched on purpose: to escape them in output and to refuse them in input.
      'no-control-regex': 'off',
      // `_`-prefixed names are deliberately unused (a destructured field left out, a parameter kept for its position).
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true }],
    },
  },
  {
    // Tests read JSON answers loosely typed, as `any`, where a schema would only repeat the assertion.
    files: ['test/**'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    // Fixtures run by Bun and Deno themselves.
    files: ['test/webhooks/runtimes/fixtures/**'],
    languageOptions: { globals: { Bun: 'readonly', Deno: 'readonly' } },
  },
);
