/**
 * Environment providers by kind (`EnvironmentSpec['kind']`). The local provider
 * is built in; others (Docker) register here.
 */

import { DockerEnvironmentProvider, dockerProviderOptions } from './docker/provider.ts';
import type { EnvironmentProvider } from './environment.ts';
import { LocalEnvironmentProvider, type LocalProviderOptions } from './local/local.ts';

/** Options every provider factory receives (from the command line). */
export interface ProviderOptions extends LocalProviderOptions {
  [key: string]: unknown;
}

export type ProviderFactory = (options: ProviderOptions) => EnvironmentProvider;

const factories = new Map<string, ProviderFactory>([
  ['local', (options) => new LocalEnvironmentProvider(options)],
  ['docker', (options) => new DockerEnvironmentProvider(dockerProviderOptions(options))],
]);

/** Adds (or replaces) the provider factory of a kind. */
export function registerEnvironmentProvider(kind: string, factory: ProviderFactory): void {
  factories.set(kind, factory);
}

/** One provider per registered kind, made with `options`. */
export function createProviders(options: ProviderOptions = {}): EnvironmentProvider[] {
  return [...factories.values()].map((make) => make(options));
}
