/**
 * berth as a library: the package built by `npm run build` (tsc into dist/, package.json's
 * `exports`) imported by name from another folder, and one trial run through it.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDirs } from '../helpers/temp-dirs.ts';

const temp = tempDirs();
afterAll(temp.cleanup);
const root = resolve(import.meta.dirname, '..', '..');

describe("import { ... } from 'berth'", () => {
  it('the built package exports the pipeline and runs a trial of the bundled sample', async () => {
    const dir = await temp.make('berth-engine-lib-');
    // The package as npm would install it: package.json and the compiled dist/.
    const pkg = join(dir, 'node_modules', 'berth');
    mkdirSync(pkg, { recursive: true });
    copyFileSync(join(root, 'package.json'), join(pkg, 'package.json'));
    symlinkSync(join(root, 'node_modules'), join(pkg, 'node_modules'));
    execFileSync(
      process.execPath,
      [
        join(root, 'node_modules', 'typescript', 'bin', 'tsc'),
        '-p',
        join(root, 'tsconfig.build.json'),
        '--outDir',
        join(pkg, 'dist'),
      ],
      { stdio: 'pipe' },
    );
    // The consumer is a package of its own (a package.json above it named `berth` would otherwise
    // resolve the import to itself).
    writeFileSync(
      join(dir, 'package.json'),
      '{ "name": "berth-library-consumer", "private": true, "type": "module" }\n',
    );
    const script = join(dir, 'use.mjs');
    writeFileSync(
      script,
      `import { loadTasks, planTrials, makeTrialSpec, runTrial, runJob, parseEventLine, VERSION } from 'berth';
const { tasks } = await loadTasks(${JSON.stringify(join(root, 'examples', 'swe-dockerless.jsonl'))});
const [trial] = planTrials(tasks, { limit: 1 });
const spec = makeTrialSpec({ job: { id: 'lib', name: 'lib', source: 'sample' }, trialName: trial.trialName, attempt: 1, task: trial.task, agent: { name: 'oracle', options: {} } });
const events = [];
const result = await runTrial(spec, (e) => events.push(e), { trialDir: ${JSON.stringify(join(dir, 'trial'))} });
console.log(JSON.stringify({ version: VERSION, tasks: tasks.length, status: result.berth.status, runJob: typeof runJob, first: parseEventLine(JSON.stringify(events[0]))?.type, last: events.at(-1)?.type }));
`,
    );
    const out = execFileSync(process.execPath, [script], { cwd: dir, encoding: 'utf8' });
    expect(JSON.parse(out.trim().split('\n').at(-1) as string)).toEqual({
      version: expect.any(String),
      tasks: 4,
      status: 'resolved',
      runJob: 'function',
      first: 'trial-start',
      last: 'trial-end',
    });
  }, 600_000);
});
