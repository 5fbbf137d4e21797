/**
 * `${VAR}` and `${VAR:-default}` templating of `[verifier] env` and
 * `[solution] env` from the host environment (Harbor's `resolve_env_vars`).
 *
 * Consent: a value that reads a host variable that looks like a credential (by
 * its name or its value: src/sandbox/secrets.ts's `looksSecret`, the rule that
 * keeps such variables from every sandboxed command) is copied only
 * when the user allowed it with `berth run --allow-env-secrets` (or
 * `BERTH_ALLOW_ENV_SECRETS=1`); otherwise the trial fails before anything runs
 * with `EnvSecretConsentError` naming the key and the variable. Harbor asks the
 * same question interactively unless `-y`.
 */
import { looksSecret } from '../../sandbox/secrets.ts';

/** Thrown when a template reads a secret-looking host variable without consent. */
export class EnvSecretConsentError extends Error {
  override name = 'EnvSecretConsentError';
}

/** Thrown when `${VAR}` names a host variable that is not set and has no default. */
export class EnvTemplateError extends Error {
  override name = 'EnvTemplateError';
}

const TEMPLATE = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

/** Whether the user consented to copying secret host variables (the flag sets BERTH_ALLOW_ENV_SECRETS=1). */
export function secretsAllowed(hostEnv: NodeJS.ProcessEnv = process.env): boolean {
  return hostEnv.BERTH_ALLOW_ENV_SECRETS === '1';
}

/**
 * Resolves every `${VAR}` / `${VAR:-default}` in the values of `env`.
 * `${VAR:-default}` uses the default when VAR is unset or empty (shell semantics).
 * @param section name for messages, e.g. `[verifier] env`
 * @throws EnvTemplateError when VAR is unset and has no default
 * @throws EnvSecretConsentError when VAR looks like a secret and `allowSecrets` is false
 */
export function resolveEnvTemplates(
  env: Record<string, string>,
  options: { hostEnv?: NodeJS.ProcessEnv; allowSecrets?: boolean; section?: string } = {},
): Record<string, string> {
  const hostEnv = options.hostEnv ?? process.env;
  const allowSecrets = options.allowSecrets ?? secretsAllowed(hostEnv);
  const section = options.section ?? 'env';
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) {
    out[key] = value.replace(TEMPLATE, (_m, name: string, fallback: string | undefined) => {
      const host = hostEnv[name];
      const present = host !== undefined && host !== '';
      if (present && looksSecret(name, host) && !allowSecrets)
        throw new EnvSecretConsentError(
          `${section}: ${key} reads the host variable ${name}, which looks like a credential; ` +
            'pass --allow-env-secrets (or set BERTH_ALLOW_ENV_SECRETS=1) to copy it into the container',
        );
      if (present) return host;
      if (fallback !== undefined) return fallback;
      throw new EnvTemplateError(`${section}: ${key} reads the host variable ${name}, which is not set`);
    });
  }
  return out;
}

/**
 * The variables of every command in a task's environment (Harbor's `[environment] env`, in
 * `BaseEnvironment._maybe_resolve_task_env`), templates resolved; undefined when it has none.
 * @throws EnvTemplateError / EnvSecretConsentError as `resolveEnvTemplates`
 */
export function environmentVariables(
  environment: { kind: string; env?: unknown },
  allowSecrets: boolean,
): Record<string, string> | undefined {
  const env =
    environment.kind === 'docker' ? (environment.env as Record<string, string> | undefined) : undefined;
  if (!env || Object.keys(env).length === 0) return undefined;
  return resolveEnvTemplates(env, { section: '[environment] env', allowSecrets });
}
