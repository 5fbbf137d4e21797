#!/usr/bin/env -S node --
// Entry point of the `berth` command. In a checkout it runs the TypeScript sources compiled
// once into a cache (bin/compile.js; rebuilt after an edit), or through tsx when they cannot be
// compiled here; a published package ships only the compiled `dist/`.
import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const source = fileURLToPath(new URL('../src/cli/main.ts', import.meta.url));
if (existsSync(source)) {
  const { compiledEntry } = await import('./compile.js');
  const entry = process.env.BERTH_NO_BUILD === '1' ? undefined : await compiledEntry(root);
  if (entry) {
    process.setSourceMapsEnabled(true);
    await import(pathToFileURL(entry).href);
  } else {
    const { register } = await import('tsx/esm/api');
    register();
    await import(source);
  }
} else {
  await import('../dist/cli/main.js');
}
