/**
 * The verifier's Go build cache (src/environments/local/go-cache.ts, issue 18): later trials of
 * a snapshot get what the go tool compiled for the same content, and nothing a trial does (its
 * agent, its tests) changes a later trial's verdict or its own. Real go, real sandbox.
 */
import { createHash, randomUUID } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Agent } from '../../src/agents/agent.ts';
import { CommandAgent } from '../../src/agents/command.ts';
import { OracleAgent } from '../../src/agents/oracle.ts';
import { goPackagesOf } from '../../src/environments/local/go-cache.ts';
import { installCacheKey, installsDir } from '../../src/environments/local/install-cache.ts';
import { LocalEnvironmentProvider } from '../../src/environments/local/local.ts';
import { probeIsolation } from '../../src/sandbox/isolation.ts';
import type { Task } from '../../src/tasks/task.ts';
import { runTrialWith } from '../../src/trials/trial.ts';
import { SwebenchVerifier } from '../../src/verifiers/swebench.ts';
import { swebenchTask } from '../helpers/swebench-task.ts';

let cacheDir = '';
const saved = process.env.BERTH_CACHE_DIR;
beforeAll(async () => {
  cacheDir = await mkdtemp(join(tmpdir(), 'berth-gorows-cache-'));
  process.env.BERTH_CACHE_DIR = cacheDir;
});
afterAll(async () => {
  if (saved === undefined) delete process.env.BERTH_CACHE_DIR;
  else process.env.BERTH_CACHE_DIR = saved;
  await rm(cacheDir, { recursive: true, force: true });
});

const goReady = async () =>
  (await execa('go', ['version'], { reject: false })).exitCode === 0 && probeIsolation().method === 'bwrap';

/** A Go module whose `lib.Answer` is wrong at the base commit; the test patch adds the test that says so. */
function goRow(testCommand: string): { task: Task; spec: Task['environment'] } {
  const spec: Task['environment'] = {
    kind: 'local',
    snapshot: {
      files: {
        'go.mod': `module example.com/gorows${randomUUID().slice(0, 8)}\n\ngo 1.19\n`,
        'lib/lib.go': 'package lib\n\nfunc Answer() int { return 41 }\n',
        'm.go': 'package m\n\nfunc Name() string { return "m" }\n',
        'in_test.go': 'package m\n\nimport "testing"\n\nfunc TestIn(t *testing.T) {}\n',
        // Imported by m's external tests and importing m: go compiles m's tests differently when
        // other packages are tested with them (as BurntSushi/toml's).
        'helper/helper.go':
          'package helper\n\nimport "example.com/MOD"\n\nfunc Name() string { return m.Name() }\n',
        'cmd/answer/main.go':
          'package main\n\nimport (\n\t"fmt"\n\n\t"example.com/MOD/lib"\n)\n\nfunc main() { fmt.Println(lib.Answer()) }\n',
      },
    },
  };
  const files = spec.snapshot?.files as Record<string, string>;
  const module = (files['go.mod'] as string).split('\n')[0]?.slice('module '.length) as string;
  for (const name of ['cmd/answer/main.go', 'helper/helper.go'])
    files[name] = (files[name] as string).replace('example.com/MOD', module);
  const test = `package m_test\n\nimport (\n\t"testing"\n\n\tm "${module}"\n\t"${module}/helper"\n\t"${module}/lib"\n)\n\nfunc TestAnswer(t *testing.T) {\n\tif helper.Name() != m.Name() {\n\t\tt.Fatal(helper.Name())\n\t}\n\tif lib.Answer() != 42 {\n\t\tt.Fatalf("got %d", lib.Answer())\n\t}\n}\n\nfunc TestStill(t *testing.T) {}\n`;
  const testPatch = `diff --git a/m_test.go b/m_test.go\nnew file mode 100644\n--- /dev/null\n+++ b/m_test.go\n@@ -0,0 +1,${test.split('\n').length - 1} @@\n${test
    .split('\n')
    .slice(0, -1)
    .map((line) => `+${line}`)
    .join('\n')}\n`;
  const gold =
    'diff --git a/lib/lib.go b/lib/lib.go\n--- a/lib/lib.go\n+++ b/lib/lib.go\n@@ -1,3 +1,3 @@\n package lib\n \n-func Answer() int { return 41 }\n+func Answer() int { return 42 }\n';
  const task = swebenchTask(spec, {
    name: 'go-build-cache',
    testCommand,
    passToPass: ['TestStill'],
    solution: { kind: 'patch', patch: gold },
  });
  if (task.verifier.kind === 'swebench') {
    task.verifier.testPatch = testPatch;
    task.verifier.failToPass = ['TestAnswer'];
    task.verifier.testFiles = ['m_test.go'];
  }
  return { task, spec };
}

const provider = new LocalEnvironmentProvider();
async function trial(task: Task, agent: Agent = new OracleAgent()) {
  const dir = await mkdtemp(join(tmpdir(), 'berth-gorows-trial-'));
  try {
    const result = await runTrialWith({
      task,
      agent,
      attempt: 1,
      trialName: 't__1',
      trialDir: join(dir, 'trial'),
      jobId: 'go-build-cache',
      source: 'inline',
      providers: [provider],
      verifiers: [new SwebenchVerifier()],
    });
    const read = (name: string) => readFile(join(dir, 'trial', 'verifier', name), 'utf8').catch(() => '');
    return {
      result,
      output: await read('test-output.txt'),
      cache: JSON.parse((await read('build-cache.json')) || 'null') as {
        outcome: string;
        added: number;
      } | null,
      agentLog: await readFile(join(dir, 'trial', 'agent', 'command', 'stdout.txt'), 'utf8').catch(() => ''),
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Every file of the entry's verifier cache with its sha256 and owner. */
function snapshotOf(spec: Task['environment']): Map<string, string> {
  const root = join(installsDir(), installCacheKey(spec) as string, 'go-verify');
  const out = new Map<string, string>();
  for (const sub of readdirSync(root)) {
    const dir = join(root, sub);
    if (!statSync(dir).isDirectory()) continue;
    for (const name of readdirSync(dir)) {
      const stat = statSync(join(dir, name));
      out.set(
        `${sub}/${name}`,
        `${stat.uid} ${createHash('sha256')
          .update(readFileSync(join(dir, name)))
          .digest('hex')}`,
      );
    }
  }
  return out;
}

describe('the verifier Go build cache (local)', () => {
  it('compiles the packages of the test files as a test command names them, never a path out of the repository', () => {
    expect(
      goPackagesOf([
        'toml_test.go',
        './a/b_test.go',
        'a/c_test.go',
        '../x/y_test.go',
        '/etc/z_test.go',
        'README.md',
      ]),
    ).toEqual(['.', './a']);
  });

  it('a later trial compiles nothing compiled for the same content before, and never gets a cached result', async (ctx) => {
    if (!(await goReady())) ctx.skip();
    // One package, as SWE-style Go rows name the packages of their test files.
    const { task, spec } = goRow('go test -x -v . 2>&1');
    const first = await trial(task);
    expect(first.result.berth.status).toBe('resolved');
    expect(first.cache).toMatchObject({ outcome: 'filled' });
    expect(first.cache?.added).toBeGreaterThan(0);
    const entry = join(installsDir(), installCacheKey(spec) as string);
    expect(readdirSync(join(entry, 'go-verify-filled'))).toHaveLength(1);
    // The shared cache now holds the compiled test package (the hidden tests)...
    const grep = await execa('grep', ['-rlF', 'TestAnswer', join(entry, 'go-verify')], { reject: false });
    expect(grep.stdout.trim()).not.toBe('');
    // ...which a later trial's agent never sees; its fix (the same content) is compiled already.
    const agent = new CommandAgent({
      command: `sed -i s/41/42/ lib/lib.go; echo "leaked: $(grep -rlF TestAnswer "$GOCACHE" | wc -l)"`,
    });
    const later = await trial(task, agent);
    expect(later.agentLog).toContain('leaked: 0');
    expect(later.result.berth.status).toBe('resolved');
    expect(later.cache).toMatchObject({ outcome: 'hit', added: 0 });
    // Linked and run; nothing compiled (the patched lib and the test package came from the cache).
    expect(later.output).toMatch(/\/link /);
    expect(later.output).not.toMatch(/\/compile /);
    expect(later.output).toMatch(/^--- PASS: TestAnswer/m);
    expect(later.output).not.toContain('(cached)');
  });

  it('a row whose tests fail fails in every later trial: the compile step /bin/true "ok" is never a result', async (ctx) => {
    if (!(await goReady())) ctx.skip();
    // No -count: go would serve a cached result if there were one.
    const { task } = goRow('go test -v ./...');
    // A patch that fixes nothing (an empty one is not verified at all).
    const none = new CommandAgent({ command: 'echo notes > notes.txt' });
    for (let round = 0; round < 3; round++) {
      const run = await trial(task, none);
      expect(run.cache?.outcome).toBe(round === 0 ? 'filled' : 'hit');
      expect(run.result.berth.status).toBe('unresolved');
      expect(run.output).toMatch(/^--- FAIL: TestAnswer/m);
      expect(run.output).not.toContain('(cached)');
    }
    expect((await trial(task)).result.berth.status).toBe('resolved');
  });

  it("an agent that gives an unchanged package its own object code in its build cache reaches neither its own tests nor a later trial's", async (ctx) => {
    if (!(await goReady())) ctx.skip();
    const { task } = goRow('go test -v ./...');
    // The agent swaps the cache's index entry of lib (as it is at the base commit) for the one of
    // its own version of lib, and puts the source back: `go run` in its own environment now
    // prints 42 with lib's source unchanged. Its tests must still see lib as it is.
    const swap = [
      'set -e',
      'base=$(go list -export -f "{{.Export}}" ./lib)',
      "sed -i 's/41/42/' lib/lib.go",
      'mine=$(go list -export -f "{{.Export}}" ./lib)',
      "sed -i 's/42/41/' lib/lib.go",
      'a_base=$(grep -l " $(basename "$base" -d) " "$GOCACHE"/*/*-a)',
      'a_mine=$(grep -l " $(basename "$mine" -d) " "$GOCACHE"/*/*-a)',
      'sed "s/^v1 [0-9a-f]* /v1 $(basename "$a_base" -a) /" "$a_mine" > "$a_base.new"',
      'mv "$a_base.new" "$a_base"',
      'echo "answer: $(go run ./cmd/answer)"',
      'echo notes > notes.txt',
    ].join('\n');
    const first = await trial(task, new CommandAgent({ command: swap }));
    expect(first.result.berth.status).toBe('unresolved');
    expect(first.output).toMatch(/^--- FAIL: TestAnswer/m);
    // The swap worked where the agent ran (else this test proves nothing).
    expect(first.agentLog).toContain('answer: 42');
    const second = await trial(task, new CommandAgent({ command: swap }));
    expect(second.result.berth.status).toBe('unresolved');
  });

  it('test code that writes into its build cache (replaced files, fake entries, links) changes nothing for the next trial', async (ctx) => {
    if (!(await goReady())) ctx.skip();
    // Every cache file rewritten with as many x (one process for them all: a shell loop forked
    // three processes per file and took 330 s of this file's 678 s at load 16-21).
    const poison = [
      `perl -e 'for my $f (@ARGV) { my $n = -s $f; open(my $h, ">", $f) or next; print $h "x" x $n; $c++ } print "rewritten $c\n"' "$GOCACHE"/*/*`,
      'zeros=$(printf "%064d" 0); for d in "$GOCACHE"/*/; do ln -sf /etc/passwd "$d/$zeros-d" || true; done',
      'echo v1 poison > "$GOCACHE/00/$(printf "%064d" 1)-a"',
      'echo poisoned',
    ].join('; ');
    const { task, spec } = goRow(`go test -v ./... 2>&1; ${poison}`);
    // At load 19 on 2 cores the poison (then a loop of three processes per cache file) passed
    // the helper's 60 s and the trial was an error, not a verdict on the cache.
    if (task.verifier.kind === 'swebench') task.verifier.timeoutSec = 600;
    const first = await trial(task);
    expect(first.result.berth.status).toBe('resolved');
    expect(first.output).toContain('poisoned');
    expect(first.output).toMatch(/^rewritten [1-9]\d*$/m);
    const before = snapshotOf(spec);
    const second = await trial(task);
    expect(second.cache?.outcome).toBe('hit');
    expect(second.output).toContain('poisoned');
    expect(second.result.berth.status).toBe('resolved');
    expect(snapshotOf(spec)).toEqual(before);
    for (const owner of [...before.values()].map((v) => v.split(' ')[0])) expect(owner).toBe('0');
  }, 900_000);
});

const hostile = readFileSync(
  fileURLToPath(new URL('../fixtures/breaker5/go-poison-agent.sh', import.meta.url)),
  'utf8',
);

/** breaker5's findings 1 and 2 (go 1.19's cgo link flags ran the agent's `ld` in the compile step). */
describe('breaker5: the compile step runs only the go tool', () => {
  it("a hostile agent's cgo link flags (//line + //go:cgo_ldflag -B) never run its code in the compile step: its own unfixed row does not pass, nor is a later trial's test package poisoned", async (ctx) => {
    if (!(await goReady())) ctx.skip();
    const { task } = goRow('go test -v ./...');
    const first = await trial(task, new CommandAgent({ command: hostile }));
    expect(first.agentLog).toContain('planted in');
    // Its code in the compile step would make its own unfixed row pass: it does not.
    expect(first.result.berth.status).toBe('unresolved');
    expect(first.output).toMatch(/^--- FAIL: TestAnswer/m);
    // A later trial whose agent's wrong fix is in a package the tests do not import: TestAnswer
    // must fail (lib.Answer() is still 41).
    const later = await trial(
      task,
      new CommandAgent({
        command: "sed -i 's/fmt.Println(lib.Answer())/fmt.Println(lib.Answer() + 1)/' cmd/answer/main.go",
      }),
    );
    expect(later.result.berth.status).toBe('unresolved');
    expect(later.output).toMatch(/^--- FAIL: TestAnswer/m);
  }, 900_000);
});
