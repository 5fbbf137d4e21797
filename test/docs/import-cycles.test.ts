/**
 * No import cycle between berth's source files at run time (type-only imports aside: they are
 * erased). Checked with madge over src/, as CI runs the tests.
 */
import { resolve } from 'node:path';
import madge from 'madge';
import { describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '..', '..');

describe('src/ import graph', () => {
  it('has no cycle at run time', async () => {
    const graph = await madge(resolve(root, 'src'), {
      fileExtensions: ['ts'],
      excludeRegExp: [/\.test\.ts$/],
      tsConfig: resolve(root, 'tsconfig.json'),
      detectiveOptions: { ts: { skipTypeImports: true }, es6: { skipTypeImports: true } },
    });
    const files = Object.keys(graph.obj());
    expect(files.length).toBeGreaterThan(200);
    // Every module resolved: a cycle cannot hide behind an import madge could not follow.
    expect(graph.warnings().skipped).toEqual([]);
    expect(graph.circular()).toEqual([]);
  }, 120_000);
});
