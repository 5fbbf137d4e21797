/**
 * The Harbor verifier: runs a task's `tests/test.sh` in the environment after
 * the agent and reads the reward it writes, as Harbor's `Verifier` does
 * (`src/harbor/verifier/verifier.py`), fail-closed:
 *
 * 1. the engine has stopped every process the agent started and, when the agent
 *    changed the environment outside its work folder, moved verification to a fresh
 *    environment (src/trials/verifier-environment.ts);
 * 2. `/logs/verifier` and `/tests` are removed and `/logs/verifier` made again, so a
 *    reward file, a link in their place, a `test.sh` or test files the agent planted
 *    are gone;
 * 3. `tests/` is copied to `/tests`, then `bash /tests/test.sh >
 *    /logs/verifier/test-stdout.txt 2>&1` runs with the verifier timeout (its
 *    exit code is ignored, as in Harbor);
 * 4. `reward.json` is read, else `reward.txt`. Several numeric keys in
 *    reward.json are several metrics. A missing file, an empty file or a
 *    non-numeric value gives reward 0 and Harbor's exception name
 *    (`RewardFileNotFoundError`, `RewardFileEmptyError`,
 *    `VerifierOutputParseError`); a timeout gives `VerifierTimeoutError`.
 *    `/logs/verifier` is copied into the trial's `verifier/` as data first
 *    (src/util/safe-fs.ts): a reward file that is a link or not a regular file is
 *    never followed and gives `VerifierOutputParseError`.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { tarPath } from '../environments/docker/tar.ts';
import { type ExecResult, logsPath } from '../environments/environment.ts';
import type { VerifierSpec } from '../tasks/task.ts';
import { roundSec } from '../trials/file-format.ts';
import { type CopyReport, describeSkipped, readFileBeneath } from '../util/safe-fs.ts';
import { shellQuote } from '../util/shell.ts';
import { verifyKotlinHarbor } from './kotlin-harbor.ts';
import type { Verifier, VerifierResult, VerifyContext } from './verifier.ts';

type HarborVerifierSpec = Extract<VerifierSpec, { kind: 'harbor' }> & {
  user?: string | number;
  /** A separate verifier's image owns `/tests` (Harbor's `skip_tests_upload`): keep it, upload nothing. */
  testsInImage?: boolean;
};

/** Parses reward.json / reward.txt content as Harbor does. Returns rewards, or an exception type and message. */
export function parseReward(
  file: 'reward.json' | 'reward.txt',
  content: Buffer,
): { rewards: Record<string, number> } | { exception: { type: string; message: string } } {
  if (content.length === 0)
    return { exception: { type: 'RewardFileEmptyError', message: `${file} is empty` } };
  const text = content.toString('utf8');
  if (file === 'reward.json') {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      return {
        exception: {
          type: 'VerifierOutputParseError',
          message: `reward.json is not JSON: ${(error as Error).message}`,
        },
      };
    }
    if (!value || typeof value !== 'object' || Array.isArray(value)) {
      return {
        exception: {
          type: 'VerifierOutputParseError',
          message: 'reward.json must be an object of metric name -> number',
        },
      };
    }
    const rewards: Record<string, number> = {};
    for (const [k, v] of Object.entries(value)) {
      if (typeof v !== 'number' || !Number.isFinite(v)) {
        return {
          exception: {
            type: 'VerifierOutputParseError',
            message: `reward.json: \`${k}\` is ${JSON.stringify(v)}, not a finite number`,
          },
        };
      }
      rewards[k] = v;
    }
    if (Object.keys(rewards).length === 0)
      return { exception: { type: 'VerifierOutputParseError', message: 'reward.json holds no metric' } };
    return { rewards };
  }
  // Python's float(): surrounding whitespace and `_` between digits are allowed.
  const trimmed = text.trim();
  const value =
    /^[+-]?(\d(_?\d)*)?(\.(\d(_?\d)*)?)?([eE][+-]?\d+)?$/.test(trimmed) && /\d/.test(trimmed)
      ? Number(trimmed.replace(/_/g, ''))
      : Number.NaN;
  if (!Number.isFinite(value)) {
    return {
      exception: {
        type: 'VerifierOutputParseError',
        message: `reward.txt holds ${JSON.stringify(text.slice(0, 80))}, not a number`,
      },
    };
  }
  return { rewards: { reward: value } };
}

export class HarborVerifier implements Verifier {
  readonly kind = 'harbor' as const;

  /**
   * Runs `tests/test.sh` and reads its reward file; for a Kotlin Benchmark task (the spec's
   * `expectedTests`), berth grades the JUnit reports test.sh left instead (kotlin-harbor.ts).
   */
  async verify(context: VerifyContext): Promise<VerifierResult> {
    const spec = context.task.verifier;
    if (spec.kind === 'harbor' && spec.expectedTests)
      return verifyKotlinHarbor(
        { kind: 'harbor', verify: (c) => this.runTestScript(c) },
        context,
        spec.expectedTests,
      );
    return this.runTestScript(context);
  }

  private async runTestScript(context: VerifyContext): Promise<VerifierResult> {
    const { environment, task } = context;
    const spec = task.verifier as HarborVerifierSpec;
    if (spec.kind !== 'harbor') throw new Error(`the harbor verifier cannot verify a ${spec.kind} task`);
    const hostDir = join(context.trialDir, 'verifier');
    await mkdir(hostDir, { recursive: true });
    const details: Record<string, unknown> = {};
    // The phase ends by its timeout plus a grace, whatever the tests left to copy.
    const deadline = Date.now() + (context.timeoutSec + VERIFIER_COPY_GRACE_SEC) * 1000;
    const secondsLeft = () => Math.max(1, (deadline - Date.now()) / 1000);

    // 1. (the engine stopped every process the agent started: src/trials/verifier-environment.ts)
    // 2. empty /logs/verifier, remove /tests (whatever the agent planted there).
    const verifierLogs = logsPath(environment, 'verifier');
    const logs = shellQuote(verifierLogs);
    const reset = `${spec.testsInImage ? '' : 'rm -rf /tests && '}rm -rf ${logs} && mkdir -p ${logs} && chmod 777 ${logs}`;
    const testCommand = `bash /tests/test.sh > ${logs}/test-stdout.txt 2>&1`;
    const runOptions = {
      timeoutSec: context.timeoutSec,
      ...(spec.env ? { env: spec.env } : {}),
      ...(context.signal ? { signal: context.signal } : {}),
      ...(spec.network ? { network: spec.network as never } : {}),
    };
    let run: ExecResult | undefined;
    if (spec.user === undefined && !spec.testsInImage) {
      // Fast path, one command as root: reset, unpack the tests from standard input, run them.
      const archive = await tarPath(spec.testsDir, 'tests');
      const combined = await environment.exec(
        `${reset} || exit 97\ncommand -v tar >/dev/null 2>&1 || { echo ${NO_TAR}; exit 98; }\ntar -x -f - -C / || exit 99\necho ${TESTS_IN}\n${testCommand}`,
        { ...runOptions, input: archive },
      );
      if (combined.output.includes(TESTS_IN)) run = combined;
      else if (combined.timedOut) run = combined;
      else if (!combined.output.includes(NO_TAR)) {
        return {
          rewards: { reward: 0 },
          details,
          exception: {
            type: 'AddTestsDirError',
            message: `could not reset and copy /tests: ${combined.output.slice(0, 500)}`,
          },
        };
      }
    }
    if (!run) {
      const r = await environment.exec(reset, { user: 'root', cwd: '/', timeoutSec: 60 });
      if (r.exitCode !== 0) {
        return {
          rewards: { reward: 0 },
          details,
          exception: {
            type: 'AddTestsDirError',
            message: `could not reset /tests and /logs/verifier: ${r.output.slice(0, 500)}`,
          },
        };
      }
      // 3. Copy the hidden tests in and run them.
      try {
        if (!spec.testsInImage) await environment.upload(spec.testsDir, '/tests');
      } catch (error) {
        return {
          rewards: { reward: 0 },
          details,
          exception: { type: 'AddTestsDirError', message: (error as Error).message },
        };
      }
      run = await environment.exec(testCommand, {
        ...runOptions,
        ...(spec.user !== undefined ? { user: String(spec.user) } : {}),
      });
    }
    details.test_exit_code = run.exitCode;
    details.test_duration_sec = roundSec(run.durationSec);
    if (!run.oomKilled && environment.newOomKills) run.oomKilled = (await environment.newOomKills()) > 0;
    if (run.oomKilled) details.oom_killed = true;
    if (run.timedOut) {
      return {
        rewards: { reward: 0 },
        details,
        exception: {
          type: 'VerifierTimeoutError',
          message: `tests/test.sh passed the verifier timeout of ${context.timeoutSec} s and was killed`,
        },
      };
    }
    // 4. Rewards, from copies (data only: links and special files are recorded, not copied). The
    // reward files are copied first, on their own, so no flood of other files (the entry, depth
    // and time caps of the folder's copy) can leave them out; then the rest of /logs/verifier,
    // where the names already copied are kept.
    const rewardCopies: Partial<Record<'reward.json' | 'reward.txt', CopyReport>> = {};
    let copied: CopyReport;
    try {
      for (const file of ['reward.json', 'reward.txt'] as const) {
        try {
          rewardCopies[file] = await environment.download(`${verifierLogs}/${file}`, join(hostDir, file), {
            maxBytes: MAX_REWARD_BYTES + 1,
            maxEntries: 1,
            maxDepth: 0,
            timeoutSec: secondsLeft(),
          });
        } catch (error) {
          if (!isMissing(error)) throw error;
        }
      }
      copied = await environment.download(verifierLogs, hostDir, { timeoutSec: secondsLeft() });
    } catch (error) {
      return {
        rewards: { reward: 0 },
        details,
        exception: { type: 'DownloadVerifierDirError', message: (error as Error).message },
      };
    }
    const notCopied = copied.skipped.filter((s) => s.reason !== 'exists');
    const unlisted = copied.skippedCount - copied.skipped.length;
    if (notCopied.length + unlisted > 0)
      details.not_copied = describeSkipped({
        ...copied,
        skipped: notCopied,
        skippedCount: notCopied.length + unlisted,
      });
    // /logs/verifier itself a link: the reward files came through it; refused.
    const folderLink = copied.skipped.find((s) => s.path === '.' && s.reason === 'not-regular');
    if (folderLink) {
      return {
        rewards: { reward: 0 },
        details,
        exception: {
          type: 'VerifierOutputParseError',
          message: `${verifierLogs} is not a folder (${folderLink.kind}; not followed)`,
        },
      };
    }
    for (const file of ['reward.json', 'reward.txt'] as const) {
      const own = rewardCopies[file];
      const planted = own?.skipped.find((s) => s.path === '.' && s.reason !== 'exists');
      if (planted) {
        return {
          rewards: { reward: 0 },
          details,
          exception: {
            type: 'VerifierOutputParseError',
            message: `${file} is not a regular file (${planted.kind}${planted.target !== undefined ? ` -> ${planted.target}` : ''}; not followed)`,
          },
        };
      }
      if (!own) continue;
      const content = await readFileBeneath(hostDir, file, { maxBytes: MAX_REWARD_BYTES });
      if (content.kind === 'missing') continue;
      if (content.kind !== 'file') {
        return {
          rewards: { reward: 0 },
          details,
          exception: { type: 'VerifierOutputParseError', message: `${file} is not a regular file` },
        };
      }
      if (content.truncated) {
        return {
          rewards: { reward: 0 },
          details,
          exception: {
            type: 'VerifierOutputParseError',
            message: `${file} is larger than ${MAX_REWARD_BYTES} bytes`,
          },
        };
      }
      const parsed = parseReward(file, content.data);
      details.reward_file = file;
      if ('exception' in parsed)
        return { rewards: { reward: 0 }, details, exception: withOom(parsed.exception, run.oomKilled) };
      return { rewards: parsed.rewards, details, ...(run.oomKilled ? { exception: oomException() } : {}) };
    }
    return {
      rewards: { reward: 0 },
      details,
      exception: withOom(
        {
          type: 'RewardFileNotFoundError',
          message: `tests/test.sh wrote neither ${verifierLogs}/reward.json nor ${verifierLogs}/reward.txt`,
        },
        run.oomKilled,
      ),
    };
  }
}

const TESTS_IN = 'berth:tests-in';

/** Seconds the verifier phase may run past its timeout to copy /logs/verifier out (then the copy stops). */
export const VERIFIER_COPY_GRACE_SEC = 30;

/** Largest reward file read (bytes); a larger one is a `VerifierOutputParseError`. */
const MAX_REWARD_BYTES = 1024 * 1024;

/** Whether a download failed because the path does not exist (Docker's 404, the file system's ENOENT). */
function isMissing(error: unknown): boolean {
  const e = error as { statusCode?: number; code?: string };
  return e?.statusCode === 404 || e?.code === 'ENOENT';
}
const NO_TAR = 'berth:no-tar';

function oomException(): { type: string; message: string } {
  return {
    type: 'VerifierOutOfMemoryError',
    message: 'a verifier process was killed for exceeding the memory limit (memory_mb)',
  };
}

function withOom(
  e: { type: string; message: string },
  oom: boolean | undefined,
): { type: string; message: string } {
  return oom
    ? {
        type: e.type,
        message: `${e.message}; the test process was killed for exceeding the memory limit (memory_mb)`,
      }
    : e;
}
