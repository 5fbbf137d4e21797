import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadTasks, placeTasks } from '../../src/tasks/registry.ts';

// trust10's question: can a plain Harbor task run on the local environment, where the agent's
// `cache/` (GOCACHE, the tests' TMPDIR) outlives its commands and no engine record of changed files
// exists, so that `test.sh` would trust a cached result the agent planted? No: a Harbor task runs
// only in a container (src/trials/verifier-environment.ts empties the scratch places there and
// moves a verifier away from changes outside the work folder). `berth run -e local` leaves it there.
describe('Harbor tasks and the local environment', () => {
  it('a Harbor task given -e local still runs in Docker (a Go task whose cache could be planted)', async () => {
    const { format, tasks } = await loadTasks(join(import.meta.dirname, 'tasks', 'gowrap'));
    expect(format).toBe('harbor');
    const placed = placeTasks(tasks, 'local');
    expect(placed.map((t) => t.environment.kind)).toEqual(['docker']);
    expect(placed[0]?.verifier.kind).toBe('harbor');
  });
});
