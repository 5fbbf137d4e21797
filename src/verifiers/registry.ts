/**
 * Verifiers by kind (`VerifierSpec['kind']`). The SWE-bench verifier is built
 * in; others (Harbor's test.sh) register here.
 */
import { HarborVerifier } from './harbor.ts';
import { SwebenchVerifier, type SwebenchVerifierOptions } from './swebench.ts';
import type { Verifier } from './verifier.ts';

export interface VerifierOptions extends SwebenchVerifierOptions {
  [key: string]: unknown;
}

export type VerifierFactory = (options: VerifierOptions) => Verifier;

const factories = new Map<string, VerifierFactory>([
  ['swebench', (options) => new SwebenchVerifier(options)],
  ['harbor', () => new HarborVerifier()],
]);

/** Adds (or replaces) the verifier factory of a kind. */
export function registerVerifier(kind: string, factory: VerifierFactory): void {
  factories.set(kind, factory);
}

/** One verifier per registered kind, made with `options`. */
export function createVerifiers(options: VerifierOptions = {}): Verifier[] {
  return [...factories.values()].map((make) => make(options));
}
