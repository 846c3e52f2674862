import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { findKitPackage, mergePackageJson, newPackageJson, ScaffoldError, type PackageRequirements } from '../../src/scaffold/index.js';

const needs: PackageRequirements = {
  scripts: { dev: 'tsx watch src/server.ts', test: 'vitest run' },
  dependencies: { 'checkout-kit': '^0.1.0', fastify: '^5.0.0' },
  devDependencies: { typescript: '5.9' },
};

describe('mergePackageJson', () => {
  it('keeps tab indentation, CRLF line endings and a missing final newline; new objects go last', () => {
    const text = '{\r\n\t"name": "a",\r\n\t"type": "module"\r\n}';
    const { text: merged } = mergePackageJson(text, needs);
    expect(merged).toBe(
      '{\r\n\t"name": "a",\r\n\t"type": "module",\r\n\t"scripts": {\r\n\t\t"dev": "tsx watch src/server.ts",\r\n\t\t"test": "vitest run"\r\n\t},\r\n' +
        '\t"dependencies": {\r\n\t\t"checkout-kit": "^0.1.0",\r\n\t\t"fastify": "^5.0.0"\r\n\t},\r\n\t"devDependencies": {\r\n\t\t"typescript": "5.9"\r\n\t}\r\n}',
    );
  });

  it('never adds a package the project already has in another section, nor changes its version', () => {
    const text = `${JSON.stringify({ type: 'module', devDependencies: { fastify: '4.0.0' }, peerDependencies: { typescript: '*' }, dependencies: { 'checkout-kit': 'file:../kit' } }, null, 2)}\n`;
    const { text: merged, changes } = mergePackageJson(text, needs);
    expect(JSON.parse(merged)).toEqual({
      type: 'module',
      devDependencies: { fastify: '4.0.0' },
      peerDependencies: { typescript: '*' },
      dependencies: { 'checkout-kit': 'file:../kit' },
      scripts: needs.scripts,
    });
    expect(changes.kept.dependencies).toEqual(['checkout-kit', 'fastify', 'typescript']);
  });

  it("replaces npm init's placeholder test script, and keeps any other", () => {
    const placeholder = mergePackageJson(JSON.stringify({ type: 'module', scripts: { test: 'echo "Error: no test specified" && exit 1' } }), needs);
    expect(JSON.parse(placeholder.text).scripts.test).toBe('vitest run');
    expect(placeholder.changes.added.scripts).toMatchObject({ test: 'vitest run' });
    const own = mergePackageJson(JSON.stringify({ type: 'module', scripts: { test: 'jest' } }), needs);
    expect(JSON.parse(own.text).scripts.test).toBe('jest');
    expect(own.changes.kept.scripts).toContain('test');
  });

  it("does not report the scaffold's own scripts, met again, as the project's (init run a second time)", () => {
    const text = JSON.stringify({ type: 'module', scripts: { ...needs.scripts, lint: 'eslint .' } });
    const { changes } = mergePackageJson(text, needs);
    expect(changes.kept.scripts).toEqual([]);
    expect(changes.added.scripts).toEqual({});
    // One the project changed is its own.
    expect(
      mergePackageJson(JSON.stringify({ type: 'module', scripts: { ...needs.scripts, dev: 'tsx watch --clear-screen=false src/server.ts' } }), needs).changes
        .kept.scripts,
    ).toEqual(['dev']);
  });

  it('returns the same text when everything is there, and warns about a CommonJS package', () => {
    const text = JSON.stringify({ scripts: needs.scripts, dependencies: { ...needs.dependencies, ...needs.devDependencies } });
    const result = mergePackageJson(text, needs);
    expect(result.text).toBe(text);
    expect(result.changes.warnings).toEqual([expect.stringMatching(/^package\.json has no "type": .*npm pkg set type=module/)]);
    // What npm 11's `npm init -y` writes: the warning names it rather than saying there is none.
    const commonjs = mergePackageJson(JSON.stringify({ name: 'shop', type: 'commonjs' }), needs);
    expect(commonjs.changes.warnings).toEqual([expect.stringMatching(/^package\.json says "type": "commonjs": .*npm pkg set type=module/)]);
    expect(mergePackageJson(JSON.stringify({ type: 'module' }), needs).changes.warnings).toEqual([]);
  });

  it.each([
    ['[]', /must hold a JSON object/],
    ['{"scripts": "x"}', /"scripts" must be an object/],
    ['{', /not valid JSON/],
  ])('refuses %s with a ScaffoldError', (text, message) => {
    expect(() => mergePackageJson(text, needs)).toThrow(ScaffoldError);
    expect(() => mergePackageJson(text, needs)).toThrow(message);
  });

  it('names a new package after its folder, in npm form', () => {
    expect(JSON.parse(newPackageJson('My Shop!', needs))).toMatchObject({ name: 'my-shop-', private: true, type: 'module' });
    expect(JSON.parse(newPackageJson('_', needs)).name).toBe('shop');
  });
});

describe('findKitPackage', () => {
  it('finds the checkout-kit package root from a file inside it', () => {
    const root = fileURLToPath(new URL('../..', import.meta.url)).replace(/\/$/, '');
    const found = findKitPackage(pathToFileURL(`${root}/src/scaffold/deep/nested/file.js`));
    expect(found.root).toBe(root);
    expect(found.manifest.name).toBe('checkout-kit');
  });

  it('says so when there is none', () => {
    expect(() => findKitPackage(pathToFileURL('/tmp/nowhere/file.js'))).toThrow(/reinstall checkout-kit/);
  });
});
