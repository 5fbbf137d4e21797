/**
 * A small SWE-bench task whose "test runner" is a shell script printing
 * `RESULT <STATUS> <id>` lines (read by the test-only status-lines parser), so
 * the trial engine's steps can be tested without the real parsers.
 *
 * Base: lib.sh sets VALUE=1 (the bug). Gold patch: VALUE=2. The test patch adds
 * tests/check.sh: f2p passes only with VALUE=2; p2p always passes.
 */
import type { Task } from '../../src/tasks/task.ts';
import { makeDiff } from '../helpers/diff.ts';

export const baseFiles = { 'lib.sh': 'VALUE=1\n', 'README.md': 'shell task\n' };

export const checkScript = [
  '. ./lib.sh',
  'status=0',
  'if [ "$VALUE" = 2 ]; then echo "RESULT PASSED f2p"; else echo "RESULT FAILED f2p"; status=1; fi',
  'echo "RESULT PASSED p2p"',
  'exit $status',
  '',
].join('\n');

export async function shellTask(
  overrides: { testCommand?: string; timeoutSec?: number; name?: string } = {},
): Promise<Task> {
  const patch = await makeDiff(baseFiles, { 'lib.sh': 'VALUE=2\n' });
  const testPatch = await makeDiff(baseFiles, { 'tests/check.sh': checkScript });
  return {
    name: overrides.name ?? 'shell__task-1',
    format: 'swebench',
    origin: { file: 'inline', line: 1 },
    instruction: 'VALUE must be 2',
    environment: { kind: 'local', snapshot: { files: { ...baseFiles } } },
    solution: { kind: 'patch', patch },
    verifier: {
      kind: 'swebench',
      testPatch,
      testCommand: overrides.testCommand ?? 'bash {tests}',
      testFiles: ['tests/check.sh'],
      failToPass: ['f2p'],
      passToPass: ['p2p'],
      parser: 'status-lines',
      timeoutSec: overrides.timeoutSec ?? 60,
    },
    metadata: {},
  };
}
