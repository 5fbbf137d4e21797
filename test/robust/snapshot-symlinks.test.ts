import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { InputError } from '../../src/errors.ts';
import { checkSnapshotSymlink, loadSwebench } from '../../src/tasks/swebench/load.ts';
import { tempDirs } from '../helpers/temp-dirs.ts';

const temp = tempDirs();
afterAll(temp.cleanup);

const bin = fileURLToPath(new URL('../../bin/berth.js', import.meta.url));
const example = fileURLToPath(new URL('../../examples/swe-dockerless.jsonl', import.meta.url));
const rows = readFileSync(example, 'utf8').split('\n').filter(Boolean);

/** The example dataset with `symlinks` added to its second row. */
async function withSymlinks(symlinks: Record<string, string>): Promise<string> {
  const row = JSON.parse(rows[1] as string) as { dockerless: Record<string, unknown> };
  row.dockerless.symlinks = symlinks;
  const file = join(await temp.make('berth-links-'), 'rows.jsonl');
  await writeFile(file, `${[rows[0], JSON.stringify(row), ...rows.slice(2)].join('\n')}\n`);
  return file;
}

describe('DockerLess snapshot symlinks: a target leaving the repository root is refused (line, field)', () => {
  it('`lib/x -> ../../etc/passwd` is refused by the loader (run) and by dataset validate', async () => {
    const file = await withSymlinks({ 'lib/x': '../../etc/passwd' });
    const error = await loadSwebench(file).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(InputError);
    const { location, message } = error as InputError;
    expect(location).toMatchObject({ file, line: 2, field: 'dockerless.symlinks["lib/x"]' });
    expect(message).toContain('its target leaves the repository root');
    const validate = spawnSync('node', [bin, 'dataset', 'validate', file], {
      encoding: 'utf8',
      env: { ...process.env, CI: '1' },
    });
    expect(validate.status).toBe(2);
    expect(validate.stdout).toMatch(/berth__durations-1 +NO/);
    expect(validate.stdout).toContain(
      `${file}:2: dockerless.symlinks["lib/x"]: unsafe symlink target "../../etc/passwd"`,
    );
  });

  it('links staying inside are accepted; escapes through another link, into .git, or loops are not', async () => {
    expect(checkSnapshotSymlink('lib/x', { 'lib/x': '../README.md' })).toBeUndefined();
    expect(checkSnapshotSymlink('a/b/c', { 'a/b/c': '../../d' })).toBeUndefined();
    expect(checkSnapshotSymlink('a', { a: '..' })).toContain('leaves the repository root');
    // As text `a/b/c/../../..` is the root, but a/b/c is a link to `z` (at the root), so
    // the walk is z/../../.. and leaves the repository.
    expect(checkSnapshotSymlink('x', { x: 'a/b/c/../../..', 'a/b/c': '../../z' })).toContain(
      'leaves the repository root',
    );
    expect(checkSnapshotSymlink('x', { x: 'hooks', hooks: '.git/hooks' })).toContain('.git');
    expect(checkSnapshotSymlink('x', { x: 'y', y: 'x' })).toContain('loop');
    await expect(loadSwebench(await withSymlinks({ 'lib/alias.js': 'csvline.js' }))).resolves.toHaveLength(
      rows.length,
    );
  });
});
