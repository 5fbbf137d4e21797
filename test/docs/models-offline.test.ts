/**
 * docs/models.md "Trying deckhand offline": the documented lines (the scripted model server of
 * examples/scripted-model/server.ts, then `berth run -a deckhand` against it) run as written and
 * resolve the bundled sample through the real gateway and the real deckhand loop.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { berth } from '../helpers/jobs.ts';
import { tempDirs } from '../helpers/temp-dirs.ts';

const temp = tempDirs();
afterAll(temp.cleanup);
const root = fileURLToPath(new URL('../../', import.meta.url));
const doc = readFileSync(join(root, 'docs', 'models.md'), 'utf8');

/** The shell block of the section, line by line. */
function documentedLines(): string[] {
  const start = doc.indexOf('**Trying deckhand offline, without a real model.**');
  expect(start).toBeGreaterThan(0);
  const block = /```sh\n([\s\S]*?)```/.exec(doc.slice(start));
  return (block?.[1] ?? '').trim().split('\n');
}

/** Splits a documented command line into words (no quoting in these lines). */
const words = (line: string) => line.split(/\s+/).filter((w) => w !== '');

describe('docs/models.md: deckhand offline', () => {
  let server: ChildProcess | undefined;
  afterAll(() => {
    server?.kill('SIGTERM');
  });

  it('the documented server and berth run -a deckhand resolve the sample', async () => {
    const [serve, run, stop] = documentedLines();
    expect(serve).toMatch(/^node --import tsx examples\/scripted-model\/server\.ts --port (\d+) &$/);
    expect(stop).toBe('kill %1');
    // The documented port may be taken on a shared machine: the same command with a free one.
    const serveWords = words((serve as string).replace(/ &$/, '')).map((w, i, all) =>
      all[i - 1] === '--port' ? '0' : w,
    );
    server = spawn(serveWords[0] as string, serveWords.slice(1), {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const url = await new Promise<string>((resolve, reject) => {
      let out = '';
      server?.stdout?.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        const match = /scripted model: (http:\/\/127\.0\.0\.1:\d+\/v1)\n/.exec(out);
        if (match) resolve(match[1] as string);
      });
      server?.on('exit', (code) => reject(new Error(`the server exited ${code}`)));
    });

    const [assignment, command, ...args] = words(run as string);
    expect(assignment).toBe('OPENAI_API_KEY=offline');
    expect(command).toBe('berth');
    const documentedUrl = args[args.indexOf('--model-base-url') + 1];
    expect(documentedUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
    const jobs = await temp.make('berth-deckhand-offline-');
    const result = berth(
      [
        ...args.map((w) => (w === documentedUrl ? url : w)),
        '--jobs-dir',
        jobs,
        '--job-name',
        'offline',
        '-n',
        '2',
      ],
      { OPENAI_API_KEY: 'offline' },
    );
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout + result.stderr).toContain('resolved 4/4');
    expect(result.stdout + result.stderr).toContain('model: 80 tokens in (0 cached), 40 out');
    const trial = JSON.parse(
      readFileSync(join(jobs, 'offline', 'berth__toposort-1__1', 'result.json'), 'utf8'),
    );
    expect(trial.agent_info.name).toBe('deckhand');
    expect(trial.berth.status).toBe('resolved');
  }, 300_000);
});
