/**
 * Speed of a local trial against the bare minimum (issue: "Speed" of the
 * foundation). In one run, the bundled sample goes
 *
 * - through berth's trial engine with the oracle agent (materialise the
 *   snapshot as a sealed single-commit repository, apply the gold patch with
 *   the fallback chain, discard test files, apply the test patch, run the
 *   tests in their own process group with markers and a capped log, parse,
 *   grade, write the results atomically), and
 * - through a plain bash script per instance doing the same steps with
 *   nothing else: write the files (heredocs), git init and commit, git apply
 *   both patches, run the test command.
 *
 * Each is timed with -n 1 (one instance at a time) and -n 2, interleaved over
 * several rounds; the median of each is reported. Prints the ratio berth/shell
 * at -n 1 (target <= 1.15) and berth's speed-up from -n 1 to -n 2 (target:
 * near-linear on 2 cores, i.e. close to the shell's own speed-up).
 *
 *   npx tsx bench/local-trials.ts [--rounds 3] [--dataset examples/swe-dockerless.jsonl]
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { OracleAgent } from '../src/agents/oracle.ts';
import { runAll, SAMPLE } from '../src/datasets/demo.ts';
import { loadSwebench } from '../src/tasks/swebench/load.ts';

const run = promisify(execFile);

const args = process.argv.slice(2);
const option = (name: string, fallback: string) => {
  const index = args.indexOf(name);
  return index >= 0 && args[index + 1] ? (args[index + 1] as string) : fallback;
};
const rounds = Number(option('--rounds', '3'));
const dataset = resolve(option('--dataset', SAMPLE));

interface Row {
  instance_id: string;
  patch: string;
  test_patch: string;
  dockerless: { files: Record<string, string>; test_cmd: string; test_files: string[] };
}

const rows = (await readFile(dataset, 'utf8'))
  .trim()
  .split('\n')
  .map((line) => JSON.parse(line) as Row);
const tasks = await loadSwebench(dataset);
const scratch = await mkdtemp(join(tmpdir(), 'berth-bench-'));

/** A bash script that reproduces one instance with the gold patch, as plainly as possible. */
function shellScript(row: Row, index: number): string {
  let delimiter = 0;
  const heredoc = (path: string, content: string) => {
    const tag = `BERTH_BENCH_EOF_${delimiter++}`;
    const body = content.endsWith('\n') ? content : `${content}\n`;
    // A file without a final newline gets it trimmed back with truncate.
    const fix = content.endsWith('\n') ? '' : `truncate -s -1 '${path}'\n`;
    return `mkdir -p "$(dirname '${path}')"\ncat > '${path}' <<'${tag}'\n${body}${tag}\n${fix}`;
  };
  const command = row.dockerless.test_cmd.replaceAll('{tests}', row.dockerless.test_files.join(' '));
  return [
    'set -e',
    `root=$(mktemp -d "${scratch}/shell-${index}-XXXXXX")`,
    'mkdir "$root/repo" && cd "$root/repo"',
    ...Object.entries(row.dockerless.files).map(([path, content]) => heredoc(path, content)),
    'git init -q -b main',
    'git add -A',
    'GIT_AUTHOR_NAME=b GIT_AUTHOR_EMAIL=b@b GIT_COMMITTER_NAME=b GIT_COMMITTER_EMAIL=b@b git commit -q -m base',
    heredoc('../gold.diff', row.patch),
    heredoc('../test.diff', row.test_patch),
    'git apply ../gold.diff',
    'git apply ../test.diff',
    'set +e',
    `${command} > ../test_output.txt 2>&1`,
    'echo "exit $?" >> ../test_output.txt',
    'cd / && rm -rf "$root"',
  ].join('\n');
}

const scripts = await Promise.all(
  rows.map(async (row, index) => {
    const path = join(scratch, `instance-${index}.sh`);
    await writeFile(path, shellScript(row, index));
    return path;
  }),
);

async function shell(concurrency: number): Promise<number> {
  const started = performance.now();
  const queue = [...scripts];
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let script = queue.shift(); script; script = queue.shift())
        await run('bash', [script], { maxBuffer: 1 << 26 });
    }),
  );
  return (performance.now() - started) / 1000;
}

async function berth(concurrency: number, round: number): Promise<number> {
  const started = performance.now();
  const results = await runAll(
    tasks,
    new OracleAgent(),
    scratch,
    `berth-${concurrency}-${round}`,
    concurrency,
    undefined,
  );
  const seconds = (performance.now() - started) / 1000;
  const unresolved = results
    .filter((r) => !r.berth.resolved)
    .map((r) => `${r.berth.instance_id}: ${r.berth.note}`);
  if (unresolved.length > 0) throw new Error(`gold did not resolve: ${unresolved.join('; ')}`);
  return seconds;
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
};

try {
  await shell(1); // warm the page cache and the interpreters once
  const times = {
    shell1: [] as number[],
    berth1: [] as number[],
    shell2: [] as number[],
    berth2: [] as number[],
  };
  for (let round = 1; round <= rounds; round++) {
    times.shell1.push(await shell(1));
    times.berth1.push(await berth(1, round));
    times.shell2.push(await shell(2));
    times.berth2.push(await berth(2, round));
    console.log(
      `round ${round}: shell -n1 ${times.shell1.at(-1)?.toFixed(2)}s  berth -n1 ${times.berth1.at(-1)?.toFixed(2)}s  shell -n2 ${times.shell2.at(-1)?.toFixed(2)}s  berth -n2 ${times.berth2.at(-1)?.toFixed(2)}s`,
    );
  }
  const [s1, b1, s2, b2] = [
    median(times.shell1),
    median(times.berth1),
    median(times.shell2),
    median(times.berth2),
  ];
  console.log(`\n${rows.length} instances, ${rounds} round(s), medians:`);
  console.log(
    `  plain shell   -n 1: ${s1.toFixed(2)}s   -n 2: ${s2.toFixed(2)}s   speed-up ${(s1 / s2).toFixed(2)}x`,
  );
  console.log(
    `  berth         -n 1: ${b1.toFixed(2)}s   -n 2: ${b2.toFixed(2)}s   speed-up ${(b1 / b2).toFixed(2)}x`,
  );
  console.log(`ratio berth/shell at -n 1: ${(b1 / s1).toFixed(3)} (target <= 1.15)`);
  console.log(`ratio berth/shell at -n 2: ${(b2 / s2).toFixed(3)}`);
  console.log(
    `berth speed-up -n 1 -> -n 2: ${(b1 / b2).toFixed(2)}x (2.00x is linear; the shell gets ${(s1 / s2).toFixed(2)}x)`,
  );
} finally {
  await rm(scratch, { recursive: true, force: true });
}
