import type { Task } from '../../src/tasks/task.ts';

/**
 * A SWE-bench task of `environment` for tests of environments and the install cache: its test
 * command `true` (or `testCommand`), no test patch, no expected tests (or `passToPass`).
 */
export function swebenchTask(
  environment: Task['environment'],
  options: { name?: string; testCommand?: string; passToPass?: string[]; solution?: Task['solution'] } = {},
): Task {
  return {
    name: options.name ?? 'env-test',
    format: 'swebench',
    origin: { file: 'inline' },
    instruction: '',
    environment,
    solution: options.solution ?? { kind: 'none' },
    verifier: {
      kind: 'swebench',
      testPatch: '',
      testCommand: options.testCommand ?? 'true',
      testFiles: [],
      failToPass: [],
      passToPass: options.passToPass ?? [],
      timeoutSec: 60,
    },
    metadata: {},
  };
}
