/**
 * The JVM runners' view of the host (reviewer, session 10): until then a runner JVM saw the whole
 * host read-only (`--ro-bind / /`), so a sample read any world-readable file: a dataset lying on
 * the host with its canonical solutions, another job's samples, a key file. Now the runners get
 * the minimal view of every function-level sample (`/usr`, `/etc`, the JDK, berth's helper and
 * Kotlin's standard library, their scratch folder). On the real toolchains, fast path and
 * reference path, and end to end through `berth eval`: a Kotlin sample that finds its answer in
 * a host file passed before; now it cannot read the file and fails.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runFast } from '../../src/functional/jvm/fast.ts';
import type { JvmVerdict } from '../../src/functional/jvm/jvm-types.ts';
import { runReference } from '../../src/functional/jvm/reference.ts';
import { jdkOf } from '../../src/functional/jvm/server.ts';
import { findJdk, findKotlin } from '../../src/functional/jvm/toolchain.ts';

const toolchains = await Promise.all([findJdk(), findKotlin()]).then(
  () => true,
  (err: Error) => {
    console.warn(`skipping the JVM runner view tests: ${err.message}`);
    return false;
  },
);

// Not under /tmp (every sandbox has a private /tmp): /var/tmp, world-readable, as a dataset on
// the host is (0755 folder, 0644 file), so only the view can hide it.
const dir = mkdtempSync('/var/tmp/berth-jvm-host-view-');
chmodSync(dir, 0o755);
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const canary = `canary-${process.pid}${Date.now()}`;
const hostFile = join(dir, 'answers.txt');
writeFileSync(hostFile, `${canary}\n`, { mode: 0o644 });

/** Kotlin: prints what it reads of the host file (or why not), and a control read of /etc/os-release. */
const READ_KT =
  '    val f = try { java.io.File(' +
  JSON.stringify(hostFile) +
  ').readText() } catch (e: Exception) { "DENIED:" + e }\n' +
  '    val etc = try { java.io.File("/etc/os-release").readText().contains("ID=") } catch (e: Exception) { false }\n' +
  '    print("HOST:" + f + " ETC:" + etc)\n    return a + b\n}\n';
const READ_JAVA =
  '        String f;\n' +
  `        try { f = new String(java.nio.file.Files.readAllBytes(java.nio.file.Paths.get(${JSON.stringify(hostFile)}))); }\n` +
  '        catch (Exception e) { f = "DENIED:" + e; }\n' +
  '        boolean etc;\n' +
  '        try { etc = new String(java.nio.file.Files.readAllBytes(java.nio.file.Paths.get("/etc/os-release"))).contains("ID="); }\n' +
  '        catch (Exception e) { etc = false; }\n' +
  '        System.out.print("HOST:" + f + " ETC:" + etc);\n        return a + b;\n    }\n';

function expectHidden(verdict: JvmVerdict | undefined, ctx: { skip: (note: string) => void }) {
  if (verdict?.sandbox !== 'bwrap') ctx.skip(`runner sandbox is ${verdict?.sandbox}, not bwrap`);
  expect(verdict?.status, JSON.stringify(verdict)).toBe('passed');
  expect(verdict?.stdout).toContain('HOST:DENIED:');
  expect(verdict?.stdout).toContain('ETC:true');
  expect(verdict?.stdout).not.toContain(canary);
}

describe.skipIf(!toolchains)('JVM runners see no host file outside their view', () => {
  it('fast path (Kotlin): a sample cannot read a world-readable host file; /etc it can', async (ctx) => {
    const [verdict] = await runFast(
      [
        {
          key: 'reader',
          language: 'kotlin',
          prompt: 'fun add(a : Int, b : Int) : Int {\n',
          completion: READ_KT,
          test: '\nfun main() {\n    if (add(2, 3) != 5) throw Exception("bad")\n}\n',
        },
      ],
      { workers: 1 },
    );
    expectHidden(verdict, ctx);
  }, 300_000);

  it('reference path (Java): the same', async (ctx) => {
    const [verdict] = await runReference(
      [
        {
          key: 'reader',
          language: 'java',
          prompt: 'class Main {\n    static int add(int a, int b) {\n',
          completion: READ_JAVA,
          test: '    public static void main(String[] args) {\n        if (add(2, 3) != 5) throw new RuntimeException("bad");\n    }\n}\n',
        },
      ],
      { workers: 1, compileTimeoutSeconds: 600, timeoutSeconds: 120 },
    );
    expectHidden(verdict, ctx);
  }, 600_000);

  it('berth eval: a Kotlin sample that takes its answer from the dataset on the host no longer passes', (ctx) => {
    // The problem's answer is in the problems file (its canonical solution and its test), which
    // lies on the host world-readable; the sample knows only where, never the answer.
    const problems = join(dir, 'problems.jsonl');
    writeFileSync(
      problems,
      `${JSON.stringify({
        task_id: 'HostView/0',
        language: 'kotlin',
        prompt: 'fun answer() : String {\n',
        entry_point: 'answer',
        canonical_solution: `    return "${canary}"\n}\n`,
        test: `\nfun main() {\n    if (answer() != "${canary}") throw Exception("wrong: " + answer())\n}\n`,
      })}\n`,
      { mode: 0o644 },
    );
    const completion =
      '    val text = try { java.io.File(' +
      JSON.stringify(problems) +
      ').readText() } catch (e: Exception) { return "DENIED" }\n' +
      '    return Regex("canary-[0-9]+").find(text)?.value ?: "none"\n}\n';
    const samples = join(dir, 'samples.jsonl');
    writeFileSync(samples, `${JSON.stringify({ task_id: 'HostView/0', completion })}\n`);
    const run = spawnSync(
      process.execPath,
      [
        resolve(import.meta.dirname, '..', '..', 'bin', 'berth.js'),
        'eval',
        '--problems',
        problems,
        '--samples',
        samples,
        '--jobs-dir',
        join(dir, 'jobs'),
        '--json',
      ],
      { encoding: 'utf8', cwd: dir, timeout: 600_000 },
    );
    expect(run.status, run.stderr).toBe(0);
    const summary = JSON.parse(run.stdout);
    if (summary.sandbox !== 'bwrap') ctx.skip(`the samples' sandbox is ${summary.sandbox}, not bwrap`);
    expect(summary).toMatchObject({ samples: 1, passed: 0, pass_at_k: { 'pass@1': 0 } });
    const [row] = readFileSync(`${samples}_results.jsonl`, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(row.passed).toBe(false);
    expect(row.result).toContain('wrong: DENIED');
  }, 600_000);
});

describe('the JDK a runner is shown', () => {
  it('a JDK outside /usr is shown by its own folder and run by its real path; one under /usr is not bound again', () => {
    const jdk = join(dir, 'jdk-21');
    mkdirSync(join(jdk, 'bin'), { recursive: true });
    writeFileSync(join(jdk, 'bin', 'java'), '', { mode: 0o755 });
    symlinkSync(jdk, join(dir, 'current'));
    expect(jdkOf(join(dir, 'current', 'bin', 'java'))).toEqual({
      command: join(jdk, 'bin', 'java'),
      home: jdk,
    });
    const system = jdkOf('/usr/bin/java');
    expect(system.home).toBeUndefined();
    expect(system.command.startsWith('/usr/')).toBe(true);
    expect(jdkOf('java')).toEqual({ command: 'java' });
  });
});
