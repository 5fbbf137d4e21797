/**
 * The tamper checks of one SWE-bench test run, in the order the verifier needs them:
 *
 * 1. `begin`: arm the runner probes (probes.ts) and plan what to read;
 * 2. `preScript` / `postApplyScript`: shell lines for berth's bookkeeping script (the submitted
 *    patch's pytest settings files before the reset; after the test patch, in containers, a
 *    fingerprint of the test and runner files and the probe folder);
 * 3. `beforeRun`: a local environment's fingerprint, taken by berth (host-fingerprint.ts);
 *    `command` / `execOptions`: the test command as run;
 * 4. `afterRun`: read the probes' files and fingerprint again (one trusted command; in a local
 *    environment none, unless git's list of runner files may have changed);
 * 5. `judge`: every layer's findings (patch-scan.ts, cross-check.ts, run-check.ts) in one record.
 *
 * Layer (c), the engine's record of changes outside the work folder in containers, is helper
 * trust-fs's; it is merged here through `environmentFindings` when it exists.
 */
import { randomBytes } from 'node:crypto';
import type { Environment, ExecOptions, FileSystemChange } from '../../environments/environment.ts';
import type { SwebenchGrade } from '../../grading/swebench.ts';
import { changesByTests, environmentFinding, fileSystemBefore } from '../../trials/verifier-environment.ts';
import { patchFiles } from '../../util/patch-files.ts';
import { traced } from '../../util/trace.ts';
import { type ConsolePass, crossCheck } from './cross-check.ts';
import {
  hostFingerprints,
  type ListingState,
  listingState,
  MAX_WALK_ENTRIES,
  parseListing,
} from './host-fingerprint.ts';
import {
  type CreatedModule,
  configTextScript,
  createdModules,
  importableScript,
  importRoots,
  type KnownPython,
  readConfigTexts,
  readImportable,
  scanPatch,
  sectionedConfigsIn,
} from './patch-scan.ts';
import { type ArmedProbes, armProbes, disarmProbes, type ProbeFiles, readProbeFiles } from './probes.ts';
import {
  compareFingerprints,
  fingerprintFilesScript,
  fingerprintScript,
  parseFingerprints,
  runnerListingScript,
} from './run-check.ts';
import type { TamperFinding, TamperRecord } from './types.ts';

export interface TamperingCheckOptions {
  /** The test command, as the task gives it. */
  command: string;
  /** The submitted patch (predictions, or the diff a command agent left), if any. */
  patch?: string;
  /** Paths the test patch touches (repository-relative). */
  testPatchPaths: readonly string[];
}

/**
 * The interpreter that answered the shadow check's question in a local environment, by what
 * decides which one the shell finds (`localPythonKey`): later trials run it directly instead of
 * its shim (`importableScript` checks that the shim is still the one found and that no version
 * file in the repository or above it picks another). Local environments only: every trial sees
 * the host's interpreters, read-only; a container's are its image's.
 */
const knownPythons = new Map<string, KnownPython>();

/**
 * The inputs of a local command's search for python besides the working folder's version files:
 * the test command's conda environment and the host variables the sandbox passes on that
 * version managers and PATH lookups read (PATH, HOME, PYENV_*, ASDF_*, MISE_*, RTX_*, CONDA*,
 * VIRTUAL_ENV...).
 */
function localPythonKey(command: string): string {
  const vars = Object.entries(process.env)
    .filter(([name]) => /^(PATH|HOME|VIRTUAL_ENV|PYENV|ASDF|MISE|RTX|CONDA|PYTHON)/.test(name))
    .sort(([a], [b]) => (a < b ? -1 : 1));
  return JSON.stringify([command.match(/\bconda activate ([A-Za-z0-9_.-]+)/)?.[1] ?? '', vars]);
}

export class TamperingCheck {
  private readonly marks = {
    configs: `@@berth-configs-${randomBytes(8).toString('hex')}@@`,
    before: `@@berth-fingerprint-${randomBytes(8).toString('hex')}@@`,
    ready: `@@berth-probe-ready-${randomBytes(8).toString('hex')}@@`,
    after: `@@berth-after-${randomBytes(8).toString('hex')}@@`,
    importable: `@@berth-importable-${randomBytes(8).toString('hex')}@@`,
  };
  /**
   * Folders the test run puts modules first on `sys.path` from ('' = the repository's top): the
   * command's plain relative `PYTHONPATH` entries, then those the bookkeeping script resolved.
   */
  private importRoots: string[];
  /** Modules the patch creates (in any folder): asked about in the bookkeeping script. */
  private readonly createdModules: CreatedModule[];
  /** `knownPythons`' key for this check's environment (local environments only). */
  private readonly pythonKey: string | undefined;
  /** Which of `createdModules` the environment's python imports from outside the repository. */
  private importable = new Set<string>();
  private configText: Record<string, string> = {};
  private before = new Map<string, string>();
  private after = new Map<string, string>();
  private files: ProbeFiles = {};
  private ready: boolean;
  private readonly sectioned: string[];
  /**
   * A local environment's repository (a host folder): berth fingerprints it itself
   * (host-fingerprint.ts); undefined in containers, or when git's list had a name that is not
   * UTF-8 (then the shell fingerprints, as in containers).
   */
  private hostRepo: string | undefined;
  /** git's list of runner files after the test patch (local environments). */
  private listed: string[] = [];
  private listingBefore: ListingState | undefined;
  /** git listed a name that is not UTF-8: the shell fingerprints this run (`beforeRun`, `afterRun`). */
  private fingerprintInShell = false;
  /** The repository could be walked whole before the tests and not after them (local environments). */
  private unwalkable = false;
  /** Containers: the engine's record of the file system right before the tests. */
  private fileSystemBefore: Set<string> | undefined;
  /** Containers: what the tests changed in the places berth's commands after them depend on. */
  private changedByTests: FileSystemChange[] = [];
  /** Containers: the engine's list of processes right before the tests. */
  private processesBefore: Set<string> | undefined;
  /** Containers: processes the test run left running, killed before berth's commands after it. */
  private strayKilled = 0;

  /** The probes, once armed (`begin` and `beforeRun` wait for them). */
  private armed!: ArmedProbes;
  /**
   * A local environment's probes being armed (host files, no command): this runs while the
   * bookkeeping script does, and `beforeRun` waits for it.
   */
  private arming: Promise<ArmedProbes> | undefined;
  /** `afterRun` under way (started by `startAfterRun`). */
  private afterRunning: Promise<void> | undefined;
  /** A local environment's probe folder being removed once its files were read. */
  private disarming: Promise<void> | undefined;

  private constructor(
    private readonly env: Environment,
    private readonly options: TamperingCheckOptions,
  ) {
    this.sectioned = options.patch ? sectionedConfigsIn(options.patch) : [];
    this.importRoots = importRoots(options.command);
    this.createdModules = options.patch ? createdModules(options.patch) : [];
    this.pythonKey = env.kind === 'local' ? localPythonKey(options.command) : undefined;
    // Local probes are in place once armed; a container's are made by the bookkeeping script.
    this.ready = env.kind === 'local';
    this.hostRepo = env.kind === 'local' ? env.workdir : undefined;
  }

  /**
   * Plans the check. A container's probes are armed now (their set-up script goes into the
   * bookkeeping script); a local environment's host folder is made meanwhile (the bookkeeping
   * script does not use it) and is in place when `beforeRun` returns.
   */
  static async begin(env: Environment, options: TamperingCheckOptions): Promise<TamperingCheck> {
    const check = new TamperingCheck(env, options);
    const arming = armProbes(env, options.command);
    if (env.kind === 'local') {
      // Never an unhandled rejection: `beforeRun` or `dispose` takes the outcome.
      arming.catch(() => undefined);
      check.arming = arming;
    } else check.armed = await arming;
    return check;
  }

  /** The armed probes (a local environment's: waited for). */
  private async probes(): Promise<ArmedProbes> {
    if (this.arming) {
      this.armed = await this.arming;
      this.arming = undefined;
    }
    return this.armed;
  }

  /**
   * Shell lines run first in the bookkeeping script: the patch's pytest settings files as it left
   * them, then which of the top-level modules it creates the environment's python imports from
   * outside the repository (shadows of pytest's dependencies and installed distributions).
   */
  preScript(): string {
    return [
      configTextScript(this.sectioned, this.marks.configs),
      importableScript(
        this.createdModules,
        this.marks.importable,
        this.options.command,
        this.pythonKey !== undefined ? knownPythons.get(this.pythonKey) : undefined,
      ),
    ]
      .filter((l) => l !== '')
      .join('\n');
  }

  /**
   * Shell lines run after the test patch is applied: the first fingerprint (containers), then
   * (containers) the probe folder. A local environment's first fingerprint is berth's, in
   * `beforeRun`; nothing of it runs here.
   */
  postApplyScript(): string {
    const lines = [`echo '${this.marks.before}'`];
    if (!this.hostRepo) lines.push(fingerprintScript(this.options.testPatchPaths));
    if (!this.hostRepo && this.armed.setupScript)
      lines.push(
        `{ ${this.armed.setupScript}\n} >/dev/null 2>&1 && echo '${this.marks.ready}' && ${fingerprintFilesScript(this.armed.codeFiles)}`,
      );
    return lines.join('\n');
  }

  /** Takes this check's parts out of the bookkeeping script's output; returns the rest. */
  absorbBookkeeping(output: string): string {
    const configs = readConfigTexts(output, this.sectioned, this.marks.configs);
    this.configText = configs.texts;
    const importable = readImportable(configs.rest, this.marks.importable);
    this.importable = importable.names;
    if (this.pythonKey !== undefined && importable.python)
      knownPythons.set(this.pythonKey, importable.python);
    this.importRoots = [...new Set([...this.importRoots, ...importable.roots])];
    let rest = importable.rest;
    const at = rest.indexOf(`${this.marks.before}\n`);
    if (at !== -1) {
      const tail = rest.slice(at + this.marks.before.length + 1);
      rest = rest.slice(0, at);
      if (tail.includes(this.marks.ready)) this.ready = true;
      if (!this.hostRepo) this.before = parseFingerprints(tail);
    }
    return rest;
  }

  /**
   * Right before the tests: a local environment's first fingerprint, taken by berth (or by the
   * shell in the sandbox when git listed a name that is not UTF-8).
   */
  async beforeRun(signal?: AbortSignal): Promise<void> {
    const armed = this.probes();
    if (this.hostRepo) {
      // Every runner file on disk, ignored by git or not (pytest reads a conftest.py whatever a
      // .gitignore says). The walk decides what is fingerprinted, so the two go one after the
      // other (the probes are armed meanwhile).
      const repo = this.hostRepo;
      this.listingBefore = await traced('tamper: walk before', () => listingState(repo));
      if (!this.listingBefore.walked) await this.listInSandbox(signal);
    }
    if (this.hostRepo && this.listingBefore) {
      const paths = [...this.options.testPatchPaths, ...this.listed, ...this.listingBefore.runnerNames];
      const repo = this.hostRepo;
      this.before = await traced('tamper: fingerprints before', () => hostFingerprints(repo, paths));
    } else if (this.env.kind !== 'local') {
      // The tests may run as root: what they change outside the work folder is read after them,
      // and what they leave running is killed before berth's commands after them.
      this.fileSystemBefore = await fileSystemBefore(this.env);
      if (this.env.processList) this.processesBefore = new Set(await this.env.processList());
    }
    if (!this.hostRepo && this.fingerprintInShell) {
      const run = await this.env.exec(fingerprintScript(this.options.testPatchPaths), {
        timeoutSec: 120,
        trusted: true,
        ...(signal ? { signal } : {}),
      });
      this.before = parseFingerprints(run.output);
    }
    await armed;
  }

  /**
   * git's list of runner files (tracked or untracked, ignored ones too), taken in the sandbox
   * when the walk before the tests did not see every file (past its entry cap, a name that is
   * not UTF-8, folders too deep): then it names what the walk missed. A whole walk sees every
   * file git could list that is there to read (git's list leaves out `node_modules` as the walk
   * does; an index entry with no file, or beyond a link, has no content to fingerprint), so no
   * git runs for it. A name in git's list that is not UTF-8: the shell fingerprints byte for
   * byte (`fingerprintInShell`).
   */
  private async listInSandbox(signal?: AbortSignal): Promise<void> {
    const run = await this.env.exec(runnerListingScript(), {
      timeoutSec: 120,
      trusted: true,
      ...(signal ? { signal } : {}),
    });
    const listed = parseListing(run.output);
    if (listed) this.listed = listed;
    else this.hostRepo = undefined;
    this.fingerprintInShell = listed === undefined;
  }

  /** The test command to run: with the probes when they are in place, else as given. */
  get command(): string {
    return this.ready ? this.armed.command : this.options.command;
  }

  /** Options the test command's exec needs (the local probe folder's binds). */
  get execOptions(): Pick<ExecOptions, 'binds'> {
    return this.ready && this.armed.binds.length > 0 ? { binds: this.armed.binds } : {};
  }

  /**
   * A local environment: starts `afterRun` right after the test command ended, so that it runs
   * while the verifier writes, parses and grades the log; `afterRun` then waits for it. In a
   * container nothing starts early: `afterRun` kills what the tests left running before its
   * own command, and runs where it always did (after the verifier's reads of the log's files).
   */
  startAfterRun(signal?: AbortSignal): void {
    if (!this.hostRepo) return;
    this.afterRunning ??= this.collectAfterRun(signal);
    // Never an unhandled rejection: `afterRun` takes the outcome.
    this.afterRunning.catch(() => undefined);
  }

  /** After the tests: the probes' files and the second fingerprint (one trusted command, or none locally). */
  async afterRun(signal?: AbortSignal): Promise<void> {
    this.afterRunning ??= this.collectAfterRun(signal);
    await this.afterRunning;
  }

  private async collectAfterRun(signal?: AbortSignal): Promise<void> {
    if (this.hostRepo) {
      await this.afterRunOnHost(this.hostRepo, signal);
      return;
    }
    // A process the tests left (root, like berth's commands here) could signal berth's next
    // command, or write into its output through /proc/<pid>/fd (breaker7:
    // `pytest-restore-and-forge-after-run`): none may be alive when it runs. The engine lists
    // the processes from outside; any not there before the tests (a pid and its start time)
    // means the container's whole pid namespace is killed (its PID 1; the script below starts it again).
    if (this.env.killStrayProcesses) {
      const now = this.env.processList ? await this.env.processList() : undefined;
      if (!now || !this.processesBefore || now.some((p) => !this.processesBefore?.has(p)))
        this.strayKilled = Math.max(1, await this.env.killStrayProcesses());
    }
    // A container's probe code is fingerprinted before the collect script removes it.
    const script = [
      // One stream in program order (see the bookkeeping script in src/verifiers/swebench.ts).
      'exec 2>&1',
      this.ready ? fingerprintFilesScript(this.armed.codeFiles) : '',
      this.ready ? this.armed.collectScript : '',
      `echo '${this.marks.after}'`,
      fingerprintScript(this.options.testPatchPaths),
    ]
      .filter((l) => l !== '')
      .join('\n');
    const run = await this.env.exec(script, {
      timeoutSec: 120,
      trusted: true,
      ...(signal ? { signal } : {}),
    });
    const at = run.output.indexOf(`${this.marks.after}\n`);
    const collected = at === -1 ? run.output : run.output.slice(0, at);
    if (at !== -1) {
      this.after = parseFingerprints(run.output.slice(at + this.marks.after.length + 1));
      for (const [path, value] of parseFingerprints(collected))
        if (this.armed.codeFiles.includes(path)) this.after.set(path, value);
    }
    if (this.ready) this.files = await readProbeFiles(this.armed, collected);
    // After berth's commands: a tool they ran that the tests replaced is in the engine's record,
    // which nothing in the container can edit.
    if (this.fileSystemBefore && this.env.fileSystemChanges)
      this.changedByTests = changesByTests(
        await this.env.fileSystemChanges(),
        this.fileSystemBefore,
        this.env.workdir,
      );
  }

  /** `afterRun` of a local environment: berth reads the probes' files and fingerprints itself. */
  private async afterRunOnHost(repo: string, signal?: AbortSignal): Promise<void> {
    let listed = this.listed;
    // The probes' files are read while the repository is walked (nothing untrusted runs any more).
    const files = this.ready ? readProbeFiles(this.armed) : Promise.resolve<ProbeFiles>({});
    files.catch(() => undefined);
    const state = await traced('tamper: walk after', () => listingState(repo));
    // The walk saw every file: its runner names (ignored by git or not) and git's list from
    // before the run are all there is to fingerprint; nothing the run did to git's state
    // (a .gitignore, info/exclude, config) can hide a file from it. A walk the run made
    // incomplete (past the entry cap, a name that is not UTF-8, folders too deep) is a finding:
    // git, whose state the run may have changed, would have to say what is there.
    if (this.listingBefore?.walked && !state.walked) this.unwalkable = true;
    if (!state.walked) {
      // The repository was too big for the walk before the run already: take git's list again,
      // in the sandbox (ignored files included).
      const run = await this.env.exec(runnerListingScript(), {
        timeoutSec: 120,
        trusted: true,
        ...(signal ? { signal } : {}),
      });
      const again = parseListing(run.output);
      if (again) listed = again;
      else {
        // A new name that is not UTF-8: listed now, not before, so it counts as created.
        listed = run.output.split('\0').filter((p) => p !== '' && p !== '\n');
      }
    }
    const paths = [...this.options.testPatchPaths, ...listed, ...state.runnerNames];
    this.after = await traced('tamper: fingerprints after', () => hostFingerprints(repo, paths));
    for (const path of listed)
      if (!this.after.has(path) && !this.listed.includes(path))
        this.after.set(path, 'listed, not readable by name');
    this.files = await files;
    // Read: the folder goes now, while the verifier grades (`dispose` waits for it).
    this.disarming = disarmProbes(this.armed);
    this.disarming.catch(() => undefined);
  }

  /**
   * Every layer's findings.
   * @param grades the run's verdicts under berth's parsing and under the harness's (last line wins).
   */
  judge(input: {
    grades: { default: SwebenchGrade; swebench: SwebenchGrade };
    parserName?: string;
    log: string;
    exitCode: number | null;
    timedOut: boolean;
    workdir: string;
    environmentFindings?: TamperFinding[];
  }): TamperRecord {
    const findings: TamperFinding[] = [];
    const notes: string[] = [];
    if (this.options.patch)
      findings.push(
        ...scanPatch(this.options.patch, this.configText, {
          names: this.importable,
          roots: this.importRoots,
        }),
      );
    const patchPaths = new Set(
      this.options.patch
        ? patchFiles(this.options.patch).flatMap((f) =>
            [f.newPath, f.oldPath].filter((p): p is string => !!p),
          )
        : [],
    );
    if (this.ready) {
      const byId = new Map<string, ConsolePass>();
      for (const [rules, grade] of Object.entries(input.grades) as [
        'default' | 'swebench',
        SwebenchGrade,
      ][]) {
        if (grade.status === 'error') continue;
        for (const v of grade.verdicts) {
          if (!v.passed) continue;
          const id = v.matchedId ?? v.id;
          const pass = byId.get(id) ?? { id, default: false, swebench: false, category: v.category };
          pass[rules] = true;
          byId.set(id, pass);
        }
      }
      const checked = crossCheck({
        armed: this.armed,
        files: this.files,
        exitCode: input.exitCode,
        timedOut: input.timedOut,
        ...(input.parserName ? { parserName: input.parserName } : {}),
        log: input.log,
        consolePasses: [...byId.values()],
        patchPaths,
        testFiles: new Set(this.options.testPatchPaths),
        workdir: input.workdir,
      });
      findings.push(...checked.findings);
      notes.push(...checked.notes);
      if (!checked.pytestReport && !checked.nodeReport)
        notes.push(
          'no runner report was read (the runner is not pytest or node --test, or it wrote none): console and exit code only',
        );
    } else {
      notes.push('the runner probes could not be set up in the environment: console and exit code only');
    }
    if (this.before.size > 0 || this.after.size > 0) {
      const changed = compareFingerprints(this.before, this.after);
      if (changed) findings.push(changed);
    }
    if (this.unwalkable)
      findings.push({
        kind: 'changed-during-run',
        layer: 'run',
        veto: true,
        message: `the test run made the repository impossible to walk whole (more than ${MAX_WALK_ENTRIES} entries, a name that is not UTF-8 or folders too deep): the runner files it created cannot be told`,
      });
    if (this.strayKilled > 0)
      notes.push(
        `the test run left processes running in the container: all were killed before berth's commands after it (${this.strayKilled})`,
      );
    if (this.changedByTests.length > 0) {
      findings.push(
        environmentFinding(
          this.changedByTests,
          true,
          "berth's checks after the tests run the container's tools, so the run is not trusted",
          'the test run',
        ),
      );
    }
    findings.push(...(input.environmentFindings ?? []));
    return { vetoed: findings.some((f) => f.veto), findings, notes };
  }

  /** Removes what the check left on the host (a local environment's probe folder). */
  async dispose(): Promise<void> {
    await this.afterRunning?.catch(() => undefined);
    if (this.disarming) return this.disarming;
    const armed = this.arming ? await this.arming.catch(() => undefined) : this.armed;
    if (armed) await disarmProbes(armed);
  }
}
