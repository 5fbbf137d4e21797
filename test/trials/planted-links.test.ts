/**
 * Issue 10 §1 on the local environment: a `command` agent (and its set-up) that replaces
 * every file berth writes in its log folder by a link to a host file, a host folder, a
 * fifo or a dangling path leaves those targets unchanged; berth's records are its own,
 * regular files, and the links are recorded, never followed.
 */
import { lstatSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CommandAgent } from '../../src/agents/command.ts';
import { LocalEnvironmentProvider } from '../../src/environments/local/local.ts';
import { loadSwebench } from '../../src/tasks/swebench/load.ts';
import type { Task } from '../../src/tasks/task.ts';
import { runTrialWith as runTrial } from '../../src/trials/trial.ts';
import { createVerifiers } from '../../src/verifiers/registry.ts';
import {
  COMMAND_AGENT_FILES,
  makeVictims,
  notCopiedPaths,
  plantLines,
  type Victims,
} from '../helpers/planted-links.ts';
import { tempDirs } from '../helpers/temp-dirs.ts';

const temp = tempDirs();
let victims: Victims;
beforeAll(async () => {
  victims = await makeVictims();
});
afterAll(async () => {
  await temp.cleanup();
  await victims.remove();
});

const sample = fileURLToPath(new URL('../../examples/swe-dockerless.jsonl', import.meta.url));
const task = (await loadSwebench(sample)).find((t) => t.name === 'berth__csvline-1') as Task;

const SETUP_FILES = ['setup/command.txt', 'setup/return-code.txt', 'setup/stdout.txt'];

const regular = (path: string) => lstatSync(path).isFile() && !lstatSync(path).isSymbolicLink();

describe('links planted in the agent log folder (local environment)', () => {
  it.each([0, 1, 2, 3])(
    'rotation %i: every target stays unchanged, every record is berth’s',
    async (rotation) => {
      const dir = join(await temp.make('berth-planted-'), 'trial');
      const agent = new CommandAgent({
        setup: [
          'base="$BERTH_AGENT_LOG_DIR"',
          ...plantLines(victims, '$base', SETUP_FILES, rotation),
          'mkfifo "$base/fifo-here"',
        ].join('\n'),
        command: [
          'base="$BERTH_AGENT_LOG_DIR"',
          ...plantLines(victims, '$base', COMMAND_AGENT_FILES, rotation),
          "echo '// touched' >> lib/csvline.js",
          'exit 3',
        ].join('\n'),
      });
      const result = await runTrial({
        task,
        agent,
        attempt: 1,
        trialName: 't',
        trialDir: dir,
        jobId: 'planted-links',
        source: 'test',
        providers: [new LocalEnvironmentProvider()],
        verifiers: createVerifiers(),
      });
      victims.unchanged();
      expect(result.exception_info).toBeNull();
      expect(['resolved', 'unresolved']).toContain(result.berth.status);
      const agentDir = join(dir, 'agent');
      // berth's records: regular files with berth's content.
      expect(readFileSync(join(agentDir, 'command', 'return-code.txt'), 'utf8')).toBe('3\n');
      expect(readFileSync(join(agentDir, 'setup', 'return-code.txt'), 'utf8')).toBe('0\n');
      expect(readFileSync(join(agentDir, 'exit-code.txt'), 'utf8')).toBe('3\n');
      expect(readFileSync(join(agentDir, 'instruction.md'), 'utf8')).toBe(task.instruction);
      expect(JSON.parse(readFileSync(join(agentDir, 'prediction.json'), 'utf8')).instance_id).toBe(task.name);
      expect(readFileSync(join(agentDir, 'patch.diff'), 'utf8')).toContain('// touched');
      for (const name of ['apply.log', 'command/command.txt', 'setup/command.txt'])
        expect(regular(join(agentDir, name)), name).toBe(true);
      // What the agent planted is recorded, not copied.
      const skipped = notCopiedPaths(result.berth.not_copied?.agent);
      for (const name of [...COMMAND_AGENT_FILES, ...SETUP_FILES, 'fifo-here'])
        expect(skipped, name).toContain(name);
      expect(JSON.parse(readFileSync(join(dir, 'result.json'), 'utf8')).berth.not_copied.agent).toEqual(
        result.berth.not_copied?.agent,
      );
    },
  );
});
