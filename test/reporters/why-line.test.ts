import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { headTail } from '../../src/results/trial-record.ts';
import { berth, writeSampleWithInstall } from '../helpers/jobs.ts';
import { tempDirs } from '../helpers/temp-dirs.ts';

const temp = tempDirs();
afterAll(temp.cleanup);

/** `berth run` (CI lines) of the oracle on a sample row whose install step is `install`: its output and the row's line. */
async function installFailure(install: string) {
  const dir = await temp.make('berth-ux-why-');
  const file = writeSampleWithInstall(join(dir, 'sample.jsonl'), 'berth__toposort-1', install);
  const run = berth([
    'run',
    '-p',
    file,
    '-a',
    'oracle',
    '-i',
    'berth__toposort-1',
    '--jobs-dir',
    join(dir, 'jobs'),
  ]);
  expect(run.code, run.stderr).toBe(0);
  return { run, line: run.stdout.split('\n').find((l) => l.startsWith('berth__toposort-1')) };
}

describe("the console's one-line note keeps the end of a long error", () => {
  it('headTail: the first and last lines; a long line keeps its head and, mostly, its tail', () => {
    expect(headTail('short', 20)).toBe('short');
    expect(headTail('Traceback (most recent call last):\n  File "x.py", line 1\nValueError: bad', 80)).toBe(
      'Traceback (most recent call last): … ValueError: bad',
    );
    const long = `install command exited 1: ${'x'.repeat(200)} | ValueError: the pin does not exist`;
    const line = headTail(long, 100);
    expect(line.length).toBe(100);
    expect(line.startsWith('install command exited 1: ')).toBe(true);
    expect(line.endsWith('| ValueError: the pin does not exist')).toBe(true);
    expect(line).toContain('…');
  });

  it('headTail takes out terminal control: colours, OSC titles, screen clears, other control characters', () => {
    const hostile =
      'a\u001b[31mred\u001b[0m \u001b]0;pwned\u0007x\u001b[2J\u0007\r\nTraceback\nmid\nValueError: \u0000bad';
    const line = headTail(hostile, 200);
    expect(line).toBe('ared x\uFFFD … ValueError: \uFFFDbad');
    // biome-ignore lint/suspicious/noControlCharactersInRegex: no control character may be left.
    expect(line).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/);
  });

  it('berth run: an install that prints escape sequences does not reach the terminal with them', async () => {
    const { run, line } = await installFailure(`printf '\\033]0;pwned\\007\\033[2Jfailed\\n'; exit 4`);
    expect(line).toContain('install command exited 4: failed');
    expect(run.stdout).not.toContain('\u001b');
  });

  it('berth run: an install that fails with a Python traceback shows the exception line', async () => {
    // The traceback's last line says what went wrong; its first lines are the install's noise.
    const { line } = await installFailure(`python3 -c "import json; json.loads('{broken')"`);
    expect(line).toContain('EnvironmentSetupError in environment: install command exited 1: ');
    // Cut at the start of the message (160 characters) the line ended in the traceback's frames.
    expect(line).toMatch(
      /JSONDecodeError: Expecting property name enclosed in double quotes: line 1 column 2 \(char 1\)$/,
    );
    expect(line?.length).toBeLessThan(300);
  });
});
