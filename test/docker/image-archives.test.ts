/**
 * The multilingual demo's `tar_path` (issue 19): a task's image comes from
 * `sample_images/<tar_path>` (a `docker save` archive) when the engine does not have it, so
 * the demo's own command line runs as written with `berth` in place of
 * `python -m harbor.cli.main`. The archive is made here from the local base image plus this
 * machine's node (the csv-kit example's toolchain); the task is the bundled csv-kit example
 * with its Dockerfile built FROM that archive's image, as the demo's tasks are.
 */
import { cpSync, createWriteStream, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { execa } from 'execa';
import { pack } from 'tar-stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectDocker } from '../../src/environments/docker/client.ts';
import {
  archiveTags,
  ImageArchiveError,
  loadArchiveFor,
} from '../../src/environments/docker/image-archives.ts';
import { BASE_IMAGE, skipDocker, tempDir } from './helpers.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const EXAMPLE = join(ROOT, 'examples', 'multilingual');
const ID = 'berth-examples__csv-kit__b7c2829d';
// Named like the demo's images (<owner>__<repo>), with a suffix of this run: nothing else has it.
const IMAGE = `harbor2-test/berth-examples__csv-kit:${process.pid}`;
const LABEL = 'dev.berth.test=harbor2-image-archives';

async function imageExists(image: string): Promise<boolean> {
  return (await execa('docker', ['image', 'inspect', image], { reject: false })).exitCode === 0;
}

describe.skipIf(skipDocker)('image archives (tar_path)', () => {
  let dataset: string;
  beforeAll(async () => {
    dataset = tempDir('berth-harbor2-archive-');
    // The archive: the base image plus node, saved under the demo-style name, then removed.
    const ctx = join(dataset, 'ctx');
    mkdirSync(ctx);
    cpSync(process.execPath, join(ctx, 'node'));
    writeFileSync(join(ctx, 'Dockerfile'), `FROM ${BASE_IMAGE}\nCOPY node /usr/local/bin/node\n`);
    await execa('docker', ['build', '-q', '-t', IMAGE, '--label', LABEL, ctx]);
    mkdirSync(join(dataset, 'sample_images'));
    await execa('docker', [
      'save',
      '-o',
      join(dataset, 'sample_images', 'berth-examples__csv-kit.tar'),
      IMAGE,
    ]);
    await execa('docker', ['rmi', IMAGE]);
    // The dataset: the bundled csv-kit task, its Dockerfile FROM the archive's image.
    const entries = JSON.parse(readFileSync(join(EXAMPLE, 'sample_task.json'), 'utf8')) as Array<{
      instance_id: string;
    }>;
    const entry = { ...entries.find((e) => e.instance_id === ID), tar_path: 'berth-examples__csv-kit.tar' };
    writeFileSync(join(dataset, 'sample_task.json'), JSON.stringify([entry], null, 2));
    const taskDir = join(dataset, 'sample_tasks', ID);
    cpSync(join(EXAMPLE, 'sample_tasks', ID), taskDir, { recursive: true });
    const dockerfile = join(taskDir, 'environment', 'Dockerfile');
    writeFileSync(dockerfile, readFileSync(dockerfile, 'utf8').replace(/^FROM .*$/m, `FROM ${IMAGE}`));
  }, 600_000);
  afterAll(async () => {
    await execa('docker', ['rmi', IMAGE], { reject: false });
  });

  it('(first, while the engine lacks the image) a task whose archive is missing says where it looked and how to get the image', async () => {
    const missing = tempDir('berth-harbor2-archive-missing-');
    cpSync(join(dataset, 'sample_tasks'), join(missing, 'sample_tasks'), { recursive: true });
    writeFileSync(join(missing, 'sample_task.json'), readFileSync(join(dataset, 'sample_task.json')));
    const run = await execa(
      'node',
      [
        join(ROOT, 'bin', 'berth.js'),
        'run',
        '-p',
        `sample_tasks/${ID}`,
        '--jobs-dir',
        'jobs',
        '--job-name',
        'm',
      ],
      { cwd: missing, reject: false, env: { BERTH_CACHE_DIR: join(missing, 'cache') } },
    );
    const trial = readFileSync(join(missing, 'jobs', 'm', `${ID}__1`, 'result.json'), 'utf8');
    expect(trial).toContain('berth-examples__csv-kit.tar is in none of');
    expect(trial).toContain(join(missing, 'sample_images', 'berth-examples__csv-kit.tar'));
    // The console's one line keeps the message's start and its end (the way out).
    expect(run.stdout).toMatch(/error .* in environment: image \S+ is .*--image-map \S+=<local image>/);
    expect(trial).toMatch(/image \S+ is not available locally/);
    // berth check agrees, and says where the archive is found once it is there.
    const check = (cwd: string) =>
      execa('node', [join(ROOT, 'bin', 'berth.js'), 'check', '-p', '.', '--json'], { cwd, reject: false });
    const needOf = async (cwd: string) =>
      (
        JSON.parse((await check(cwd)).stdout) as {
          tasks: Array<{ needs: Array<{ image: string; status: string; detail?: string }> }>;
        }
      ).tasks[0]?.needs.find((n) => n.image === IMAGE);
    const without = await needOf(missing);
    expect(without?.status).toBe('missing');
    expect(without?.detail).toContain('berth-examples__csv-kit.tar is in none of');
    expect(await needOf(dataset)).toEqual({
      image: IMAGE,
      status: 'archive',
      detail: `loaded from ${join(dataset, 'sample_images', 'berth-examples__csv-kit.tar')} when a trial starts`,
    });
  });

  it("the demo's command line, with berth: the missing image is loaded from sample_images/ and the oracle resolves", async () => {
    expect(await imageExists(IMAGE)).toBe(false);
    const run = await execa(
      'node',
      [
        join(ROOT, 'bin', 'berth.js'),
        'run',
        '--path',
        `./sample_tasks/${ID}`,
        '--agent',
        'oracle',
        '--model',
        'openrouter/anthropic/claude-opus-4.6',
        '--jobs-dir',
        './jobs/',
        '-k',
        '1',
        '--job-name',
        'oracle',
      ],
      { cwd: dataset, reject: false, env: { BERTH_CACHE_DIR: join(dataset, 'cache') } },
    );
    const result = JSON.parse(readFileSync(join(dataset, 'jobs', 'oracle', 'result.json'), 'utf8')) as {
      stats: { evals: Record<string, { metrics: Array<{ mean: number }> }> };
    };
    expect(run.exitCode, `${run.stdout}\n${run.stderr}`).toBe(0);
    expect(run.stderr).toContain('-m/--model is ignored');
    expect(
      Object.values(result.stats.evals).map((e) => e.metrics[0]?.mean),
      run.stdout,
    ).toEqual([1]);
    expect(await imageExists(IMAGE)).toBe(true);
  });

  it('an archive that would plant or replace other images is refused before anything is loaded', async () => {
    const { docker } = await connectDocker();
    const archive = async (name: string, tags: string[]) => {
      const file = join(dataset, name);
      const tar = pack();
      tar.entry(
        { name: 'manifest.json' },
        JSON.stringify([{ Config: 'x.json', RepoTags: tags, Layers: [] }]),
      );
      tar.finalize();
      await pipeline(tar, createWriteStream(file));
      return file;
    };
    const exists = async (i: string) => imageExists(i);
    // Another repository beside the asked one: berth's base, an agent layer, a common FROM image.
    const planting = await archive('planting.tar', [
      'harbor2-test/other:1',
      BASE_IMAGE,
      'berth-agent/claude-code:9.9.9-x',
      'ubuntu:24.04',
    ]);
    expect(await archiveTags(planting)).toEqual([
      'harbor2-test/other:1',
      BASE_IMAGE,
      'berth-agent/claude-code:9.9.9-x',
      'ubuntu:24.04',
    ]);
    await expect(loadArchiveFor(docker, planting, 'harbor2-test/other:1', exists)).rejects.toThrow(
      new ImageArchiveError(
        `${planting} also holds ${BASE_IMAGE}, berth-agent/claude-code:9.9.9-x, ubuntu:24.04: berth loads an archive only when it holds nothing but harbor2-test/other:1 (docker load -i it yourself if you trust it)`,
      ),
    );
    // A tag of the asked repository the engine has already.
    await execa('docker', ['tag', BASE_IMAGE, 'harbor2-test/other:present']);
    try {
      const replacing = await archive('replacing.tar', [
        'harbor2-test/other:1',
        'harbor2-test/other:present',
      ]);
      await expect(loadArchiveFor(docker, replacing, 'harbor2-test/other:1', exists)).rejects.toThrow(
        /would replace harbor2-test\/other:present, which the engine has already/,
      );
    } finally {
      await execa('docker', ['rmi', 'harbor2-test/other:present'], { reject: false });
    }
    await expect(loadArchiveFor(docker, planting, 'harbor2-test/third:1', exists)).rejects.toThrow(
      /not harbor2-test\/third:1/,
    );
  });
});
