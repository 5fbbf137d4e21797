/**
 * Drives one compiler JVM (the fast path's, `src/functional/jvm/`) directly on MBKP batches and
 * prints each call's CPU seconds (from /proc): for measuring the compiler side apart from berth.
 *
 * Calls of `--batch` samples each, from sample `--from` of `mbkp_samples.jsonl` on; `--keep` leaves
 * the sources and classes in place (their folder is printed).
 *
 *   npx tsx bench/compiler-calls.ts [--batch 100] [--calls 6] [--from 0] [--keep] [--jvm-opt=-Dx=y]...
 */
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { archiveOptions, COMPILER_JVM_OPTIONS, ensureArchives } from '../src/functional/jvm/cds.ts';
import { ensureHelper } from '../src/functional/jvm/helper.ts';
import { HELPER_CLASS } from '../src/functional/jvm/helper-source.ts';
import { assembleProgram, packageProgram } from '../src/functional/jvm/program.ts';
import { JvmServer } from '../src/functional/jvm/server.ts';
import { findJdk, findKotlin } from '../src/functional/jvm/toolchain.ts';
import { SandboxProcess } from '../src/sandbox/process.ts';

const { values } = parseArgs({
  options: {
    batch: { type: 'string', default: '100' },
    calls: { type: 'string', default: '6' },
    'jvm-opt': { type: 'string', multiple: true, default: [] },
    from: { type: 'string', default: '0' },
    keep: { type: 'boolean', default: false },
  },
});
const root0 = resolve(import.meta.dirname, '..');
const data = resolve(root0, process.env.BERTH_DATA ?? '../shared/data', 'functional', 'mbxp');
const problems = new Map<string, { prompt: string; test: string }>();
for (const l of readFileSync(join(data, 'mbkp_release_v1.2.jsonl'), 'utf8').split('\n').filter(Boolean)) {
  const p = JSON.parse(l);
  problems.set(p.task_id, p);
}
const samples = readFileSync(join(data, 'mbkp_samples.jsonl'), 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((l) => JSON.parse(l));
const jdk = await findJdk();
const kotlin = await findKotlin();
const helper = await ensureHelper();
const archives = await ensureArchives(jdk, kotlin, helper);
const root = await mkdtemp(join(tmpdir(), 'berth-cc-'));
const batch = Number(values.batch);
const from = Number(values.from);
const argv = [
  jdk.java,
  ...COMPILER_JVM_OPTIONS,
  ...archiveOptions(archives.compile),
  ...(values['jvm-opt'] as string[]),
  '-Djava.awt.headless=true',
  '-cp',
  helper.jar,
  HELPER_CLASS,
  'compile',
  kotlin.home,
];
const server = new JvmServer({ launch: () => new SandboxProcess(argv, { cwd: root, env: process.env }) });
await server.start();
let last = server.cpuSeconds();
console.log(`start ${last.toFixed(2)} CPU-s, load ${loadavg()[0]?.toFixed(1)}`);
const cpus: number[] = [];
for (let c = 0; c < Number(values.calls); c++) {
  const files: string[] = [];
  for (let i = from + c * batch; i < from + (c + 1) * batch && i < samples.length; i++) {
    const s = samples[i];
    const p = problems.get(s.task_id)!;
    const dir = join(root, `b${c}`, `s${i}`);
    await mkdir(dir, { recursive: true });
    await writeFile(
      join(dir, 'Main.kt'),
      packageProgram('kotlin', assembleProgram(p.prompt, s.completion, p.test), `s${i}`).source,
    );
    files.push(relative(root, join(dir, 'Main.kt')));
  }
  const out = join(root, `b${c}`, 'classes');
  await mkdir(out, { recursive: true });
  const t0 = performance.now();
  const f = await server.request(['KC', String(c), out, '', ...files], 600);
  const now = server.cpuSeconds();
  cpus.push(now - last);
  console.log(
    `call ${c}: ${files.length} files, exit ${f[2]}, ${((performance.now() - t0) / 1000).toFixed(2)} s, ${(now - last).toFixed(2)} CPU-s`,
  );
  last = now;
}
console.log(
  `total ${last.toFixed(2)} CPU-s; calls ${cpus.map((x) => x.toFixed(2)).join(' ')}; load ${loadavg()[0]?.toFixed(1)}`,
);
await server.stop();
if (values.keep) console.log(`kept ${root}`);
else await rm(root, { recursive: true, force: true });
