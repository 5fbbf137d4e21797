/**
 * The tamper corpus: every case under test/tamper/cases/ on every target it names (the local
 * environment, Docker), through the real `berth run`, checked against the verdict it expects
 * under berth's default rules and under `--rules swebench`. A gold control per row used shows
 * the environment works (a broken environment would make every "not resolved" look right).
 * One test file a target (corpus-local.test.ts, corpus-docker.test.ts), so the two run side by
 * side. See test/tamper/README.md for the case format.
 */
import { spawnSync } from 'node:child_process';
import { lstatSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectDocker } from '../../src/environments/docker/client.ts';
import { LABELS } from '../../src/environments/docker/labels.ts';
import { BASE_IMAGE, skipDocker } from '../docker/helpers.ts';
import { hostFree, leftoversOf } from '../helpers/host.ts';
import type { Expectation, Outcome, SampleRow, TamperCase, Target } from './case.ts';
import {
  buildSampleImages,
  type CorpusRun,
  goldControlName,
  type LoadedCase,
  loadCases,
  outcomeOf,
  runTarget,
  type TrialOutcome,
  trialName,
  workDir,
} from './harness.ts';

function describeTrial(t: TrialOutcome): string {
  const b = t.result.berth;
  return JSON.stringify(
    {
      status: b.status,
      resolved: b.resolved,
      note: b.note,
      exception: t.result.exception_info?.exception_type ?? null,
      tampering: b.tampering ?? null,
      verdict_by_rules: b.verdict_by_rules ?? null,
      dir: t.dir,
    },
    null,
    2,
  );
}

/** Bytes of the regular files under `dir` (links are not followed). */
function bytesUnder(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) total += bytesUnder(path);
    else if (entry.isFile()) total += lstatSync(path).size;
  }
  return total;
}

const GiB = 1024 * 1024 * 1024;

function expectOutcome(t: TrialOutcome, rules: 'default' | 'swebench', want: Expectation): void {
  const got = outcomeOf(t, rules);
  const allowed = [want.outcome].flat();
  expect(allowed, `under ${rules} rules the trial came to ${got}:\n${describeTrial(t)}`).toContain(got);
  if (want.finding !== undefined) {
    const findings = t.result.berth.tampering?.findings ?? [];
    const text = findings.map((f) => `${f.kind}: ${f.message}`);
    const match = (s: string) =>
      typeof want.finding === 'string' ? s.includes(want.finding) : (want.finding as RegExp).test(s);
    expect(text.some(match), `no tamper finding matches ${want.finding}:\n${describeTrial(t)}`).toBe(true);
  }
  if (want.exception !== undefined) {
    const type = t.result.exception_info?.exception_type ?? '(none)';
    const ok = typeof want.exception === 'string' ? type === want.exception : want.exception.test(type);
    expect(ok, `exception ${type} is not ${want.exception}:\n${describeTrial(t)}`).toBe(true);
  }
  if (want.trialBytesAtMost !== undefined) {
    const bytes = bytesUnder(t.dir);
    expect(bytes, `the trial folder holds ${bytes} bytes:\n${describeTrial(t)}`).toBeLessThanOrEqual(
      want.trialBytesAtMost,
    );
  }
}

/** What the SWE-bench rules must give: the case's `swebench`, else its expectation without tampering. */
function swebenchExpectation(c: TamperCase): Expectation {
  if (c.swebench) return c.swebench;
  const outcomes = [c.expect.outcome].flat().filter((o): o is Outcome => o !== 'tampering');
  return { outcome: outcomes };
}

/**
 * The gold patch's verdict under the SWE-bench rules, where it is not `resolved`: the harness's
 * parse_log_pytest splits a line at whitespace, so `..._quoted[1h foo]` (an F2P id with a space)
 * is read as `..._quoted[1h` and the gold patch of durations-1 never resolves for it.
 */
const GOLD_UNDER_SWEBENCH: Partial<Record<SampleRow, Outcome>> = { 'berth__durations-1': 'unresolved' };

/** Cases whose task builds on an image the engine lacks (`image`), with that image. */
function missingImages(cases: LoadedCase[]): Map<string, string> {
  const missing = new Map<string, string>();
  for (const c of cases) {
    const input = c.case.input;
    const image =
      input.kind === 'harbor'
        ? input.image
        : input.kind === 'multilingual' && c.case.targets.includes('docker')
          ? 'berth-multilingual:bookworm'
          : undefined;
    if (image && spawnSync('docker', ['image', 'inspect', image], { stdio: 'ignore' }).status !== 0)
      missing.set(c.id, image);
  }
  return missing;
}

/**
 * Declares the corpus's tests on one target (call it at the top of a test file). Working on
 * cases: BERTH_TAMPER_CASES=harbor-,pytest-shadow (id prefixes) runs those cases only;
 * BERTH_TAMPER_TARGETS=local (or docker) skips the other target's file;
 * BERTH_TAMPER_KEEP=1 keeps the jobs (their folders are named in failure messages).
 */
export async function corpusSuite(target: Target): Promise<void> {
  const only = process.env.BERTH_TAMPER_CASES?.split(',').filter(Boolean);
  const loaded = (await loadCases()).filter(
    (c) => c.case.targets.includes(target) && (!only || only.some((p) => c.id.startsWith(p))),
  );
  const chosen = process.env.BERTH_TAMPER_TARGETS?.split(',');
  const skipped = (chosen !== undefined && !chosen.includes(target)) || (target === 'docker' && skipDocker);
  const missingImage = target === 'docker' && !skipped ? missingImages(loaded) : new Map<string, string>();
  const mine = loaded.filter((c) => !missingImage.has(c.id));
  if (loaded.length === 0) {
    it.skip(`tamper corpus on ${target}: no case (BERTH_TAMPER_CASES=${process.env.BERTH_TAMPER_CASES})`);
    return;
  }
  const work = workDir();
  afterAll(() => {
    if (process.env.BERTH_TAMPER_KEEP !== '1') rmSync(work, { recursive: true, force: true, maxRetries: 3 });
  });
  const rows = [
    ...new Set(mine.flatMap((c) => (c.case.input.kind === 'swebench' ? [c.case.input.row] : []))),
  ] as SampleRow[];

  describe.skipIf(skipped)(`tamper corpus on ${target}`, () => {
    let run: CorpusRun;
    let before: ReturnType<typeof hostFree>;
    let after: ReturnType<typeof hostFree>;
    beforeAll(async () => {
      const images =
        target === 'docker' && rows.length > 0 ? await buildSampleImages(BASE_IMAGE, rows, work) : undefined;
      before = hostFree(work);
      run = await runTarget(target, mine, work, {
        ...(images ? { images } : {}),
        ...(target === 'docker' ? { baseImage: BASE_IMAGE } : {}),
      });
      after = hostFree(work);
    }, 1_800_000);

    // The corpus holds bounded bombs (processes, memory, disk, output) in every phase: the host
    // keeps its pids, memory and disk (others share this machine: allowances), and nothing of
    // the run is left: no process, cgroup, mount, probe folder or container.
    it('the host keeps its free pids, memory and disk; nothing of the run is left', async () => {
      const left = run.berthPids.flatMap((pid) => leftoversOf(pid));
      if (target === 'docker') {
        const { docker } = await connectDocker();
        const jobs = new Set(run.jobNames);
        for (const c of await docker.listContainers({ all: true, filters: { label: [LABELS.managed] } }))
          if (jobs.has(c.Labels[LABELS.job] ?? ''))
            left.push(`container ${c.Id} (${c.Labels[LABELS.trial]})`);
      }
      expect(left).toEqual([]);
      const host = JSON.stringify({ before, after });
      expect(after.pids, host).toBeGreaterThan(Math.max(before.pids - 1000, after.pidMax / 2));
      expect(after.memoryBytes, host).toBeGreaterThan(Math.max(before.memoryBytes - 4 * GiB, GiB));
      // The jobs are still in the work folder (removed after the file); the rest came back.
      expect(after.diskBytes, host).toBeGreaterThan(
        Math.max(before.diskBytes - bytesUnder(work) - 2 * GiB, GiB),
      );
    });

    const trial = (name: string): TrialOutcome => {
      const t = run.trials.get(name);
      expect(
        t,
        `no result for ${name}; the job folders held:\n${run.listings.join('\n')}\nberth said:\n${run.logs.join('\n')}`,
      ).toBeDefined();
      return t as TrialOutcome;
    };

    for (const row of rows) {
      it(`gold control on ${row}: resolved under both rules, no tamper finding`, () => {
        const t = trial(goldControlName(row));
        expectOutcome(t, 'default', { outcome: 'resolved' });
        expect(t.result.berth.tampering?.findings ?? [], describeTrial(t)).toEqual([]);
        expectOutcome(t, 'swebench', { outcome: GOLD_UNDER_SWEBENCH[row] ?? 'resolved' });
      });
    }

    for (const c of loaded.filter((c) => missingImage.has(c.id)))
      it(`${c.id}: ${c.case.title}`, (ctx) =>
        ctx.skip(
          `the engine has no image ${missingImage.get(c.id)} (examples/multilingual/image/build-image.sh builds it)`,
        ));

    for (const { id, case: c } of mine) {
      const hole = c.knownHole && (!c.knownHole.targets || c.knownHole.targets.includes(target));
      const title = `${id}: ${c.title}${hole ? ` [known hole, ${c.knownHole?.owner}: ${c.knownHole?.note}]` : ''}`;
      (hole ? it.fails : it)(title, () => {
        const t = trial(trialName(id, c));
        const here = { ...c, ...c.on?.[target] };
        expectOutcome(t, 'default', here.expect);
        if (c.input.kind === 'swebench') expectOutcome(t, 'swebench', swebenchExpectation(here));
      });
    }
  });
}
