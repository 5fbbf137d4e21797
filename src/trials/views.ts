/**
 * Views of an environment the engine hands to a phase: the same environment, with a default
 * user (Harbor's `[agent] user`) or with every command reported as a `command` event.
 */
import type { Environment, ExecOptions } from '../environments/environment.ts';
import type { Phase, TrialEmit } from './events.ts';
import { roundSec } from './file-format.ts';

/** Longest command text a `command` event carries. */
const COMMAND_TEXT_LIMIT = 500;

/** A view of `environment` whose `exec` is `exec`; every other member is the environment's own. */
function withExec(
  environment: Environment,
  exec: Environment['exec'],
  extra: Partial<Environment> = {},
): Environment {
  return new Proxy(environment, {
    get(target, prop) {
      if (prop === 'exec') return exec;
      if (Object.hasOwn(extra, prop)) return extra[prop as keyof Environment];
      const value = Reflect.get(target, prop, target) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/** The environment seen through a default user: `exec` without `user` runs as `user` (Harbor's `with_default_user`). */
export function withDefaultUser(environment: Environment, user: string | number | undefined): Environment {
  if (user === undefined) return environment;
  return withExec(
    environment,
    (command: string, options: ExecOptions = {}) =>
      environment.exec(command, { ...options, user: options.user ?? String(user) }),
    { defaultExecUser: String(user) },
  );
}

/** The environment with every `exec` emitted as a `command` event of the phase running then. */
export function withCommandEvents(
  environment: Environment,
  emit: TrialEmit,
  phase: () => Phase | undefined,
): Environment {
  return withExec(environment, async (command: string, options?: ExecOptions) => {
    const result = await environment.exec(command, options);
    const current = phase();
    emit({
      type: 'command',
      ...(current ? { phase: current } : {}),
      command: command.length > COMMAND_TEXT_LIMIT ? `${command.slice(0, COMMAND_TEXT_LIMIT)}...` : command,
      exit_code: result.exitCode,
      timed_out: result.timedOut,
      duration_sec: roundSec(result.durationSec),
    });
    return result;
  });
}
