#!/usr/bin/env -S node --
// Entry point of the `berth` command. In a checkout it runs the TypeScript
// sources through tsx (no build step after `npm ci`); a published package
// ships only the compiled `dist/`.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const source = fileURLToPath(new URL('../src/cli/main.ts', import.meta.url));
if (existsSync(source)) {
  const { register } = await import('tsx/esm/api');
  register();
  await import(source);
} else {
  await import('../dist/cli/main.js');
}
