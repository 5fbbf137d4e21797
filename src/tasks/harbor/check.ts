/**
 * `berth check`: a static report of what a Harbor task needs (images, dataset
 * bases, the network during the build and the phases) and whether it can run
 * on this machine, naming the step that needs the network. Nothing is built
 * or run; the engine is only asked which images it has.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import { type EngineAccelerators, engineRefusal } from '../../environments/docker/accelerators.ts';
import { readComposeProject } from '../../environments/docker/compose.ts';
import {
  type BaseImage,
  type ImageMap,
  imagesOfDockerfile,
  logicalLines,
  normalizeImage,
  orderBases,
  readBasesManifest,
} from '../../environments/docker/dockerfile.ts';
import {
  archiveCandidates,
  archiveTags,
  findArchive,
  missingImageHint,
} from '../../environments/docker/image-archives.ts';
import { type DockerSpec, planImage } from '../../environments/docker/provider.ts';
import type { Task } from '../task.ts';

/** A command that reaches the network, and where it is. */
export interface NetworkStep {
  /** Build of the task image, of a base image, or a phase. */
  phase: 'build' | 'base build' | 'agent' | 'verifier' | 'oracle';
  /** `file:line`, relative to the task or dataset. */
  where: string;
  /** The command (trimmed). */
  command: string;
  /** What it reaches, e.g. "Gradle: Maven Central". */
  reaches: string;
  /** The RUN line that calls the script, when the command is in a script. */
  via?: string;
}

export interface ImageNeed {
  image: string;
  /** How it is made available. */
  status: 'local' | 'mapped' | 'dataset base' | 'archive' | 'missing';
  detail?: string;
}

export interface TaskCheck {
  task: string;
  image: string;
  needs: ImageNeed[];
  network: NetworkStep[];
  /** Network mode of each phase. */
  phases: { agent: string; verifier: string };
  /** yes: runs here offline; needs-network: runs only with the network; no: cannot run here. */
  canRun: 'yes' | 'needs-network' | 'no';
  reasons: string[];
  /** Harbor features the task uses (multi-step, allowlist network, ...). */
  features: string[];
  /** docker-compose services started beside `main` (sidecars). */
  services?: string[];
  /** How `storage_mb` (or berth's default) is held to on this engine, when one answers. */
  storage?: string;
  /** task.toml warnings (deprecated forms, unknown keys with their line); they do not stop a run. */
  warnings?: string[];
}

const RULES: Array<[RegExp, string]> = [
  [
    /\bapt(-get)?\s+(-\S+\s+)*(update|install|upgrade|dist-upgrade|build-dep)\b/,
    'apt: Debian/Ubuntu package mirrors',
  ],
  [/\bapk\s+(add|update|upgrade)\b/, 'apk: Alpine package mirrors'],
  [/\b(yum|dnf|microdnf)\s+(-\S+\s+)*install\b/, 'yum/dnf: package mirrors'],
  [/\b(curl|wget)\b/, 'a download (curl/wget)'],
  [/\bpip3?\s+install\b|\bpython3?\s+-m\s+pip\s+install\b/, 'pip: PyPI'],
  [/\buvx?\b\s+(?!--offline)/, 'uv: PyPI'],
  [/\b(npm|yarn|pnpm)\s+(install|ci|add|i)\b|\bnpx\s/, 'npm: the npm registry'],
  [/\bgit\s+(clone|fetch|pull|ls-remote|submodule\s+update)\b/, 'git: a remote repository'],
  [/(\.\/)?gradlew\b|\bgradle\s/, 'Gradle: its distribution, Maven Central and the Gradle Plugin Portal'],
  [/\bmvnw?\s/, 'Maven: Maven Central'],
  [/\bsdkmanager\b/, 'Android sdkmanager: dl.google.com'],
  [/\bgo\s+(get|install|mod\s+download|build|test)\b/, 'go: the Go module proxy'],
  [/\bcargo\s+(fetch|build|test|install|update)\b/, 'cargo: crates.io'],
  [/\b(bundle\s+install|gem\s+install)\b/, 'RubyGems'],
  [/\bcomposer\s+(install|update|require)\b/, 'Composer: Packagist'],
  [/\burlopen\(|\brequests\.(get|post)\(|\bfetch\(\s*['"]https?:/, 'an HTTP request from code'],
];

/**
 * Task features this build of berth runs. Others are reported by `berth check`
 * as the reason a task cannot run yet; a module that adds a feature adds its name.
 */
export const SUPPORTED_FEATURES = new Set<string>([
  'workdir',
  'multi-step',
  'separate verifier environment',
  '[agent]/[verifier] user',
  'healthcheck',
  'artifacts',
  'env templating from the host',
  'allowlist network',
  'per-phase network mode',
  // Run when the engine has them; else refused with the reason (accelerators.ts), here and in `berth run`.
  'gpus',
  'tpu',
  '[environment] env',
  'mcp servers',
  'skills',
]);

/** Harbor features a task uses beyond a single-step, shared-verifier task (from its task.toml). */
export function taskFeatures(raw: Record<string, unknown>): string[] {
  const f = new Set<string>();
  const t = raw as {
    steps?: unknown[];
    agent?: { user?: unknown; network_mode?: string };
    verifier?: {
      user?: unknown;
      network_mode?: string;
      environment?: unknown;
      environment_mode?: string;
      env?: Record<string, string>;
    };
    environment?: {
      healthcheck?: unknown;
      gpus?: number;
      tpu?: unknown;
      env?: Record<string, string>;
      mcp_servers?: unknown[];
      network_mode?: string;
      allow_internet?: boolean;
      workdir?: string;
      skills_dir?: string;
    };
    artifacts?: unknown[];
    solution?: { env?: Record<string, string> };
  };
  if (t.steps?.length) f.add('multi-step');
  if (t.verifier?.environment || t.verifier?.environment_mode === 'separate')
    f.add('separate verifier environment');
  if (t.agent?.user !== undefined || t.verifier?.user !== undefined) f.add('[agent]/[verifier] user');
  if (t.environment?.healthcheck) f.add('healthcheck');
  if ((t.environment?.gpus ?? 0) > 0) f.add('gpus');
  if (t.environment?.tpu) f.add('tpu');
  if (Object.keys(t.environment?.env ?? {}).length > 0) f.add('[environment] env');
  if (t.environment?.mcp_servers?.length) f.add('mcp servers');
  if (t.environment?.skills_dir) f.add('skills');
  if (t.environment?.workdir) f.add('workdir');
  // Artifacts under /logs/artifacts are in the trial folder already (a bind mount); others need collecting.
  const outside = (t.artifacts ?? []).some((a) => {
    const source = typeof a === 'string' ? a : (a as { source?: string }).source;
    return !source?.startsWith('/logs/artifacts/');
  });
  if (outside) f.add('artifacts');
  const base =
    t.environment?.network_mode ?? (t.environment?.allow_internet === false ? 'no-network' : 'public');
  if ([base, t.agent?.network_mode, t.verifier?.network_mode].includes('allowlist'))
    f.add('allowlist network');
  for (const phase of [t.agent?.network_mode, t.verifier?.network_mode])
    if (phase && phase !== base) f.add('per-phase network mode');
  const templated = Object.values({ ...(t.verifier?.env ?? {}), ...(t.solution?.env ?? {}) }).some((v) =>
    v.includes('${'),
  );
  if (templated) f.add('env templating from the host');
  return [...f].sort();
}

/** What a shell command reaches on the network, or undefined. `--offline` Gradle/Maven runs are offline. */
export function networkUse(command: string): string | undefined {
  const c = command.replace(/#.*$/, '');
  if (/--offline\b|\s-o\s/.test(c) && /gradle|mvn/.test(c)) return undefined;
  for (const [re, what] of RULES) if (re.test(c)) return what;
  return undefined;
}

function findFile(dir: string, name: string): string | undefined {
  if (!existsSync(dir)) return undefined;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isFile() && e.name === name) return p;
    if (e.isDirectory()) {
      const found = findFile(p, name);
      if (found) return found;
    }
  }
  return undefined;
}

/** Network steps of a shell script: one per line that reaches the network. */
export function scanScript(
  file: string,
  root: string,
  phase: NetworkStep['phase'],
  via?: string,
): NetworkStep[] {
  if (!existsSync(file)) return [];
  const out: NetworkStep[] = [];
  for (const [line, n] of logicalLines(readFileSync(file, 'utf8'))) {
    const reaches = networkUse(line);
    if (reaches)
      out.push({
        phase,
        where: `${relative(root, file)}:${n}`,
        command: line.slice(0, 160),
        reaches,
        ...(via ? { via } : {}),
      });
  }
  return out;
}

/** Network steps of a Dockerfile's RUN lines, following scripts from the context that RUN lines execute. */
export function scanDockerfile(
  file: string,
  contextDir: string,
  root: string,
  phase: NetworkStep['phase'],
): NetworkStep[] {
  const out: NetworkStep[] = [];
  for (const [line, n] of logicalLines(readFileSync(file, 'utf8'))) {
    const run = /^RUN\s+(.*)$/i.exec(line);
    if (!run) continue;
    const command = run[1] as string;
    const where = `${relative(root, file)}:${n}`;
    const reaches = networkUse(command);
    if (reaches) out.push({ phase, where, command: command.slice(0, 160), reaches });
    for (const script of command.match(/[\w./-]+\.sh\b/g) ?? []) {
      const local = findFile(contextDir, basename(script));
      if (local) out.push(...scanScript(local, root, phase, `${where} RUN ${command.slice(0, 80)}`));
    }
  }
  return out;
}

function describe(policy: { mode: string; allowedHosts?: string[] } | undefined): string | undefined {
  if (!policy) return undefined;
  return policy.mode === 'allowlist' ? `allowlist (${policy.allowedHosts?.length ?? 0} hosts)` : policy.mode;
}

/**
 * Checks one task.
 * @param imageExists asks the engine whether an image is present (undefined when no engine answers)
 */
export async function checkTask(
  task: Task,
  imageMap: ImageMap,
  imageExists: ((image: string) => Promise<boolean>) | undefined,
  engine: EngineAccelerators = { gpuRuntime: false, gpuNames: [] },
  options: {
    /** Where the tasks' image archives (`tar_path`) are looked for (`--images-dir`). */
    imagesDir?: string;
    /** Whether the engine's storage driver enforces a container's size (`StorageOpt`). */
    storageEnforced?: boolean;
  } = {},
): Promise<TaskCheck> {
  const spec = task.environment as DockerSpec;
  const taskDir = (task.metadata.harbor as { task_dir?: string } | undefined)?.task_dir ?? task.origin.file;
  const root = spec.basesDir ? join(spec.basesDir, '..') : join(taskDir, '..');
  const reasons: string[] = [];
  const needs: ImageNeed[] = [];
  const network: NetworkStep[] = [];
  const bases: BaseImage[] = spec.basesDir ? orderBases(readBasesManifest(spec.basesDir)) : [];
  const seen = new Set<string>();
  let missing = false;

  const need = async (image: string): Promise<void> => {
    const key = normalizeImage(image);
    if (seen.has(key)) return;
    seen.add(key);
    const mapped = imageMap.explicit(image);
    if (mapped) {
      needs.push({ image, status: 'mapped', detail: `--image-map -> ${mapped}` });
      return;
    }
    if (imageExists && (await imageExists(image))) {
      needs.push({ image, status: 'local' });
      return;
    }
    const base = bases.find((b) => normalizeImage(b.image) === key);
    if (base) {
      const file = join(base.contextDir, base.dockerfile);
      needs.push({ image, status: 'dataset base', detail: `built from ${relative(root, file)}` });
      network.push(...scanDockerfile(file, base.contextDir, root, 'base build'));
      for (const ref of imagesOfDockerfile(readFileSync(file, 'utf8'))) await need(ref.image);
      return;
    }
    // The multilingual demo's tar_path: loaded when the trial starts (image-archives.ts).
    let archiveNote = '';
    if (spec.imageArchive) {
      const file = findArchive(spec.imageArchive, options.imagesDir);
      const tags = file ? await archiveTags(file).catch(() => [] as string[]) : [];
      if (file && tags.includes(key)) {
        needs.push({ image, status: 'archive', detail: `loaded from ${file} when a trial starts` });
        return;
      }
      archiveNote = file
        ? `; its tar_path ${file} does not hold it (it holds ${tags.join(', ') || 'no tagged image'})`
        : `; its tar_path ${spec.imageArchive.tarPath} is in none of ${archiveCandidates(spec.imageArchive, options.imagesDir).join(', ')} (put it there or pass --images-dir DIR)`;
    }
    if (imageMap.fallback) {
      needs.push({ image, status: 'mapped', detail: `--image-map *=${imageMap.fallback}` });
      return;
    }
    missing = true;
    needs.push({
      image,
      status: 'missing',
      detail: imageExists
        ? `not on this engine and berth does not pull${archiveNote}; ${missingImageHint(image)}`
        : 'no Docker engine answers',
    });
  };

  let imageLabel: string;
  const services: string[] = [];
  const composeWarnings: string[] = [];
  try {
    const plan = planImage(spec, task.origin.file);
    if (plan.kind === 'image') {
      imageLabel = plan.image;
      await need(plan.image);
    } else if (plan.kind === 'inline') {
      imageLabel = 'built from the Dockerfile in the row';
      for (const ref of imagesOfDockerfile(plan.text)) await need(ref.image);
    } else {
      const file = join(plan.contextDir, plan.dockerfile);
      imageLabel = `built from ${relative(root, file)}${plan.tags.length ? ` as ${plan.tags.join(', ')}` : ''}`;
      for (const ref of imagesOfDockerfile(readFileSync(file, 'utf8'))) await need(ref.image);
      network.push(...scanDockerfile(file, plan.contextDir, root, 'build'));
    }
    // docker-compose sidecars: their images too (started beside main, compose.ts).
    if (spec.composeFile) {
      const project = readComposeProject(spec.composeFile, spec.env ?? {});
      // What `berth run` writes to build.log about the compose file, said here too.
      composeWarnings.push(...project.warnings);
      for (const service of project.sidecars) {
        services.push(service.name);
        if (service.build) {
          const file = join(service.build.context, service.build.dockerfile);
          for (const ref of imagesOfDockerfile(readFileSync(file, 'utf8'))) await need(ref.image);
          network.push(...scanDockerfile(file, service.build.context, root, 'build'));
        } else if (service.image) await need(service.image);
      }
    }
  } catch (error) {
    imageLabel = 'none';
    missing = true;
    reasons.push((error as Error).message);
  }

  const envNet = describe(spec.network) ?? 'public';
  const harbor = task.metadata.harbor as
    | { agent_network?: { mode: string; allowedHosts?: string[] } }
    | undefined;
  const verifierNet = describe((task.verifier as { network?: { mode: string } }).network) ?? envNet;
  const agentNet = describe(harbor?.agent_network) ?? envNet;
  if (task.verifier.kind === 'harbor')
    network.push(...scanScript(join(task.verifier.testsDir, 'test.sh'), root, 'verifier'));
  if (task.solution.kind === 'script')
    network.push(...scanScript(join(task.solution.dir, 'solve.sh'), root, 'oracle'));
  // A script that talks to the task's own services (`http://<service>:...`) reaches its
  // private network, not the internet: its HTTP requests from code are not network steps.
  if (services.length > 0) {
    const talksToServices = (where: string): boolean => {
      const text = readFileSync(join(root, where.replace(/:\d+$/, '')), 'utf8');
      return services.some((name) => text.includes(`://${name}:`) || text.includes(`://${name}/`));
    };
    for (let i = network.length - 1; i >= 0; i--) {
      const step = network[i] as NetworkStep;
      if (step.reaches === 'an HTTP request from code' && talksToServices(step.where)) network.splice(i, 1);
    }
  }

  if (imageExists === undefined) reasons.push('no Docker engine answers');
  if (missing)
    reasons.push(
      `missing image(s): ${needs
        .filter((n) => n.status === 'missing')
        .map((n) => n.image)
        .join(', ')}`,
    );
  const buildNet = network.filter((s) => s.phase === 'build' || s.phase === 'base build');
  if (buildNet.length)
    reasons.push(
      `the build needs the network (${buildNet.length} step(s), first ${buildNet[0]?.where}: ${buildNet[0]?.reaches})`,
    );
  const verifierSteps = network.filter((s) => s.phase === 'verifier');
  if (verifierSteps.length) {
    if (verifierNet === 'no-network')
      reasons.push(
        `tests/test.sh reaches the network (${verifierSteps[0]?.reaches}) but the verifier runs with no-network`,
      );
    else
      reasons.push(
        `the verifier needs the network (${verifierSteps[0]?.where}: ${verifierSteps[0]?.reaches})`,
      );
  }
  // What `berth run` refuses at the environment's start (the same function says it there).
  const refusal = task.environment.kind === 'docker' ? engineRefusal(spec, engine) : undefined;
  if (refusal) {
    missing = true;
    reasons.push(refusal);
  }
  const features = taskFeatures((task.metadata.task_toml ?? {}) as Record<string, unknown>);
  const unsupported = features.filter((f) => !SUPPORTED_FEATURES.has(f));
  if (unsupported.length)
    reasons.push(`uses Harbor features berth does not run yet: ${unsupported.join(', ')}`);
  const canRun: TaskCheck['canRun'] =
    missing || imageExists === undefined || unsupported.length
      ? 'no'
      : network.some((s) => s.phase !== 'oracle')
        ? 'needs-network'
        : 'yes';
  return {
    task: task.name,
    image: imageLabel,
    needs,
    network,
    phases: { agent: agentNet, verifier: verifierNet },
    canRun,
    reasons,
    features,
    ...(services.length ? { services } : {}),
    ...(options.storageEnforced !== undefined && task.environment.kind === 'docker'
      ? {
          storage: `${spec.storageMb !== undefined ? `storage_mb ${spec.storageMb}` : "no storage_mb (berth's default 10240 MiB)"}: ${
            options.storageEnforced
              ? 'enforced by the engine (StorageOpt)'
              : "measured every 10 s and at each phase's end, not enforced (this engine's storage driver takes no size)"
          }`,
        }
      : {}),
    warnings: [
      ...((task.metadata.harbor as { warnings?: string[] } | undefined)?.warnings ?? []),
      ...composeWarnings,
    ],
  };
}

/** Human-readable report of one task. */
export function formatCheck(c: TaskCheck): string {
  const lines = [
    `${c.task}: ${c.canRun === 'yes' ? 'can run here' : c.canRun === 'needs-network' ? 'can run here only with the network' : 'cannot run here'}`,
  ];
  lines.push(`  image: ${c.image}`);
  if (c.services?.length) lines.push(`  services beside main: ${c.services.join(', ')}`);
  if (c.storage) lines.push(`  storage: ${c.storage}`);
  for (const n of c.needs) lines.push(`  needs ${n.image}: ${n.status}${n.detail ? ` (${n.detail})` : ''}`);
  lines.push(`  network: agent ${c.phases.agent}, verifier ${c.phases.verifier}`);
  if (c.features.length) lines.push(`  features: ${c.features.join(', ')}`);
  for (const s of c.network) {
    lines.push(
      `  ${s.phase} step needs the network: ${s.where}: ${s.command}  -> ${s.reaches}${s.via ? `  [via ${s.via}]` : ''}`,
    );
  }
  // A reason of several lines (a task.toml with several problems) keeps them under its bullet.
  for (const r of c.reasons) lines.push(`  - ${r.replace(/\n/g, '\n    ')}`);
  // Each warning starts with its file and line (`.../task.toml:5: agent.timeout_sec: ...`).
  for (const w of c.warnings ?? []) lines.push(`  warning: ${w}`);
  return lines.join('\n');
}
