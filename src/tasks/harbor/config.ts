/**
 * Harbor's `task.toml`, in every form found in the wild.
 *
 * Source of the rules: Harbor 0.13 `src/harbor/models/task/config.py`
 * (`TaskConfig`), and the early form (`version = "1.0"`, `memory = "2G"`,
 * `allow_internet`) that Kotlin Benchmark and Terminal-Bench-migrated tasks use.
 * Unknown keys are kept (Harbor tolerates them). A file that does not parse or
 * breaks a rule is an `InputError` naming the file, the line and the key.
 */
import { z } from 'zod';
import { describeIssue as formatIssue, InputError, type InputIssue } from '../../errors.ts';
import { closestName } from '../../util/did-you-mean.ts';
import { parseTomlInput } from '../../util/toml.ts';
import type { McpServer, NetworkPolicy } from '../task.ts';
import { tomlKeyLines } from './toml-lines.ts';

const networkMode = z.enum(['public', 'no-network', 'allowlist']);
const userField = z.union([z.string(), z.number().int()]);
const hostRe = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/;

function validHost(host: string): boolean {
  const h = host.startsWith('*.') ? host.slice(2) : host;
  if (!h || host.includes('://') || host.includes('/') || host.includes(':')) return false;
  if (!host.startsWith('*.') && host.includes('*')) return false;
  return h.split('.').every((label) => hostRe.test(label));
}

const allowedHosts = z
  .array(z.string())
  .transform((hosts) => hosts.map((h) => h.trim().toLowerCase().replace(/\.$/, '')))
  .refine((hosts) => hosts.every(validHost), {
    message: 'allowed_hosts entries must be hostnames or `*.suffix` patterns, not URLs, ports or paths',
  });

/** Phase network fields shared by [agent], [verifier] and [environment]. */
const networkFields = {
  network_mode: networkMode.optional(),
  allowed_hosts: allowedHosts.optional(),
};

const size = z
  .string()
  .regex(/^\s*\d+(\.\d+)?\s*[gGmMkK]\s*$/, 'expected a size like "2G", "512M" or "1024K"');
const nonNegative = z.number().nonnegative();

/** Harbor's `MCPServerConfig`: `http` is read as `streamable-http`; a URL for sse/http, a command for stdio. */
const mcpServerSchema = z
  .looseObject({
    name: z.string().min(1),
    transport: z
      .string()
      .transform((t) => (t === 'http' ? 'streamable-http' : t))
      .pipe(z.enum(['stdio', 'sse', 'streamable-http']))
      .optional(),
    url: z.string().min(1).optional(),
    command: z.string().min(1).optional(),
    args: z.array(z.string()).optional(),
  })
  .superRefine((s, ctx) => {
    const transport = s.transport ?? 'sse';
    if (transport !== 'stdio' && !s.url)
      ctx.addIssue({
        code: 'custom',
        path: ['url'],
        message: `\`url\` is required for transport "${transport}"`,
      });
    if (transport === 'stdio' && !s.command)
      ctx.addIssue({
        code: 'custom',
        path: ['command'],
        message: '`command` is required for transport "stdio"',
      });
  });

/** Harbor's `TpuSpec` (GKE only): an accelerator type and a topology `NxM[xK]`. */
const tpuSchema = z.looseObject({
  type: z.string().min(1),
  topology: z
    .string()
    .transform((t) => t.trim())
    .pipe(z.string().regex(/^[1-9]\d*(x[1-9]\d*)+$/, 'expected a topology like "2x4" or "2x2x1"')),
});

const environmentSchema = z.looseObject({
  build_timeout_sec: nonNegative.optional(),
  docker_image: z.string().min(1).optional(),
  os: z
    .string()
    .transform((s) => s.toLowerCase())
    .pipe(z.enum(['linux', 'windows']))
    .optional(),
  cpus: z.number().positive().optional(),
  memory_mb: z.number().int().positive().optional(),
  memory: size.optional(),
  storage_mb: z.number().int().positive().optional(),
  storage: size.optional(),
  gpus: z.number().int().nonnegative().optional(),
  gpu_types: z.array(z.string()).optional(),
  tpu: tpuSchema.optional(),
  allow_internet: z.boolean().optional(),
  env: z.record(z.string(), z.string()).optional(),
  mcp_servers: z.array(mcpServerSchema).optional(),
  skills_dir: z.string().optional(),
  workdir: z.string().optional(),
  healthcheck: z.looseObject({ command: z.string() }).optional(),
  ...networkFields,
});

const agentSchema = z.looseObject({
  timeout_sec: nonNegative.optional(),
  user: userField.optional(),
  ...networkFields,
});

const verifierSchema = z.looseObject({
  timeout_sec: nonNegative.optional(),
  env: z.record(z.string(), z.string()).optional(),
  user: userField.optional(),
  environment_mode: z.enum(['shared', 'separate']).optional(),
  environment: environmentSchema.optional(),
  /** The Kotlin Benchmark's key, which berth reads. */
  implemented: z.boolean().optional(),
  ...networkFields,
});

const stepSchema = z.looseObject({
  name: z.string().min(1),
  agent: agentSchema.optional(),
  verifier: verifierSchema.optional(),
  min_reward: z.union([z.number(), z.record(z.string(), z.number())]).optional(),
  healthcheck: z.looseObject({ command: z.string() }).optional(),
  artifacts: z.array(z.unknown()).optional(),
});

export const taskTomlSchema = z.looseObject({
  schema_version: z.string().optional(),
  version: z.string().optional(),
  source: z.string().optional(),
  multi_step_reward_strategy: z.enum(['mean', 'final']).optional(),
  artifacts: z.array(z.union([z.string(), z.looseObject({ source: z.string() })])).optional(),
  steps: z.array(stepSchema).optional(),
  task: z
    .looseObject({
      name: z
        .string()
        .regex(/^[a-zA-Z0-9][a-zA-Z0-9._-]*\/[a-zA-Z0-9][a-zA-Z0-9._-]*$/, 'expected `org/name`')
        .refine((n) => !n.includes('..'), 'must not contain `..`'),
      description: z.string().optional(),
      authors: z.array(z.looseObject({ name: z.string() })).optional(),
      keywords: z.array(z.string()).optional(),
    })
    .optional(),
  metadata: z.looseObject({ source: z.record(z.string(), z.unknown()).optional() }).optional(),
  agent: agentSchema.optional(),
  verifier: verifierSchema.optional(),
  solution: z.looseObject({ env: z.record(z.string(), z.string()).optional() }).optional(),
  environment: environmentSchema.optional(),
});

export type RawTaskToml = z.infer<typeof taskTomlSchema>;

/** The top-level keys (tables) of Harbor's TaskConfig; any other is warned about. */
const TOP_LEVEL_KEYS: readonly string[] = Object.keys(taskTomlSchema.shape);

const HEALTHCHECK_KEYS = [
  'command',
  'interval_sec',
  'timeout_sec',
  'start_period_sec',
  'start_interval_sec',
  'retries',
];
/** The keys of the tables berth has a schema for, as the schema names them. */
const ENVIRONMENT_KEYS = Object.keys(environmentSchema.shape);
const AGENT_KEYS = Object.keys(agentSchema.shape);
const VERIFIER_KEYS = Object.keys(verifierSchema.shape);

/**
 * The keys of every known table of Harbor's TaskConfig (src/harbor/models/task/config.py, every
 * schema version): a table maps to its keys, a key to the keys of its own sub-table. `*` stands
 * for each element of an array of tables. Free-form tables (`[metadata]`, the `env` tables) are
 * absent: any key is theirs.
 */
interface KnownKeys {
  [key: string]: KnownKeys | true;
}
function keys(names: readonly string[], nested: KnownKeys = {}): KnownKeys {
  return Object.fromEntries(names.map((n) => [n, nested[n] ?? true]));
}
const ENVIRONMENT_TABLE = keys(ENVIRONMENT_KEYS, {
  healthcheck: keys(HEALTHCHECK_KEYS),
  tpu: keys(['type', 'topology']),
  mcp_servers: { '*': keys(['name', 'transport', 'url', 'command', 'args']) },
});
const ARTIFACTS_TABLE: KnownKeys = { '*': keys(['source', 'destination', 'exclude']) };
const KNOWN_TABLES: KnownKeys = {
  task: keys(['name', 'description', 'authors', 'keywords'], { authors: { '*': keys(['name', 'email']) } }),
  agent: keys(AGENT_KEYS),
  verifier: keys(VERIFIER_KEYS, { environment: ENVIRONMENT_TABLE }),
  solution: keys(['env']),
  environment: ENVIRONMENT_TABLE,
  artifacts: ARTIFACTS_TABLE,
  steps: {
    '*': keys(Object.keys(stepSchema.shape), {
      agent: keys(AGENT_KEYS),
      verifier: keys(VERIFIER_KEYS, { environment: ENVIRONMENT_TABLE }),
      healthcheck: keys(HEALTHCHECK_KEYS),
      artifacts: ARTIFACTS_TABLE,
    }),
  },
};

/**
 * Warnings for keys inside known tables that Harbor's models do not have (`[environment] cpu = 2`,
 * `[[steps]] min_rewards`): ignored as Harbor ignores them, said on their line with the nearest
 * known key.
 */
function unknownKeyWarnings(data: Record<string, unknown>, warn: Warn): void {
  const visit = (node: unknown, known: KnownKeys, path: Array<string | number>): void => {
    if (Array.isArray(node)) {
      const each = known['*'];
      if (each && each !== true) for (const [i, item] of node.entries()) visit(item, each, [...path, i]);
      return;
    }
    if (node === null || typeof node !== 'object' || node instanceof Date) return;
    for (const [key, value] of Object.entries(node as Record<string, unknown>)) {
      const sub = known[key];
      if (sub === undefined) {
        // Two edits away, or one name starting the other (`retry` for `retries`).
        const near = closestName(
          key,
          Object.keys(known).filter((k) => k !== '*'),
        );
        warn([...path, key], unknownKey(near === undefined ? undefined : fieldPath([...path, near])));
      } else if (sub !== true) visit(value, sub, [...path, key]);
    }
  };
  for (const [table, known] of Object.entries(KNOWN_TABLES))
    if (table in data) visit(data[table], known as KnownKeys, [table]);
}

/** A task.toml warning at a key: `FILE:LINE: field: message` (src/errors.ts describeIssue). */
type Warn = (path: ReadonlyArray<string | number>, message: string) => void;

/** The message of an unknown key, with the known key it is probably a typo of. */
const unknownKey = (near: string | undefined): string =>
  `unknown key, ignored as Harbor ignores unknown keys${near === undefined ? '' : ` (did you mean \`${near}\`?)`}`;

/** The task.toml after legacy forms are folded into current ones. Units: seconds, megabytes. */
export interface HarborTaskConfig {
  /** `schema_version`, or the legacy `version`. */
  schemaVersion?: string;
  /** `[task].name` (`org/name`) when present. */
  name?: string;
  /** Agent timeout; undefined means none (Harbor >= PR #1233). */
  agentTimeoutSec?: number;
  agentUser?: string | number;
  /** The agent phase's own network mode, when it overrides the environment's. */
  agentNetwork?: NetworkPolicy;
  verifierTimeoutSec: number;
  verifierEnv: Record<string, string>;
  verifierUser?: string | number;
  verifierNetwork?: NetworkPolicy;
  /** `[verifier] implemented` (Kotlin Benchmark); informational. */
  verifierImplemented?: boolean;
  verifierMode: 'shared' | 'separate';
  solutionEnv: Record<string, string>;
  buildTimeoutSec: number;
  dockerImage?: string;
  os: 'linux' | 'windows';
  cpus?: number;
  memoryMb?: number;
  storageMb?: number;
  gpus?: number;
  /** `gpu_types`: GPU models the task accepts (any one of them), e.g. `["H100", "A100"]`. */
  gpuTypes?: string[];
  /** `[environment.tpu]`: a TPU slice (GKE only in Harbor). */
  tpu?: { type: string; topology: string };
  /** `[[environment.mcp_servers]]`, handed to agents that speak MCP. */
  mcpServers: McpServer[];
  /** `skills_dir`: a folder inside the environment whose skills are copied where the agent reads them. */
  skillsDir?: string;
  workdir?: string;
  /** The environment's baseline network (`network_mode`, or legacy `allow_internet`). */
  network: NetworkPolicy;
  environmentEnv: Record<string, string>;
  /** `[metadata.source]`: provenance carried into every trial result. */
  source?: Record<string, unknown>;
  metadata: Record<string, unknown>;
  /** Multi-step tasks (run by a later issue). */
  steps?: RawTaskToml['steps'];
  artifacts: RawTaskToml['artifacts'];
  /** Deprecation notes (legacy keys seen). */
  warnings: string[];
  /** The parsed file as it was, unknown keys included. */
  raw: Record<string, unknown>;
}

/** Parses a size like "2G" into megabytes, as Harbor's `_parse_size_to_mb` does (G = 1024 M, K rounded down). */
export function parseSizeToMb(value: string): number {
  const s = value.trim().toUpperCase();
  const n = Number.parseFloat(s.slice(0, -1));
  if (s.endsWith('G')) return Math.trunc(n * 1024);
  if (s.endsWith('M')) return Math.trunc(n);
  if (s.endsWith('K')) return Math.trunc(n / 1024);
  throw new Error(`invalid size ${value}`);
}

/**
 * The 1-based line where a key path is set (`[a.b]` then `c = ...`, `[a]` then
 * `b.c = ...`, a header, an inline-table key, an array element, the n-th
 * `[[steps]]`), or undefined when it cannot be told (a missing key).
 */
export function lineOfKey(text: string, path: Array<string | number>): number | undefined {
  return tomlKeyLines(text)(path);
}

/** `environment.cpus`, `steps[1].name`: a key path as the messages print it. */
export function fieldPath(path: ReadonlyArray<PropertyKey>): string | undefined {
  let out = '';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else out += out === '' ? String(key) : `.${String(key)}`;
  }
  return out || undefined;
}

function valueAt(data: unknown, path: ReadonlyArray<PropertyKey>): unknown {
  let value = data;
  for (const key of path) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}

/** A value as a message shows it: `"two"`, `1.5`, `[1, 2]` (cut at 60 characters). */
function show(value: unknown): string {
  if (value instanceof Date) return value.toISOString();
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

const TYPE_NAMES: Record<string, string> = {
  number: 'a number',
  int: 'an integer',
  string: 'a string',
  boolean: 'a boolean',
  array: 'an array',
  object: 'a table',
  record: 'a table',
};

function typeName(expected: string): string {
  return TYPE_NAMES[expected] ?? expected;
}

/** What one zod issue says, in the words of a TOML file: `expected a number, got "two"`. */
function describeIssue(issue: z.core.$ZodIssue, value: unknown): string {
  if (issue.code === 'invalid_type') {
    if (value === undefined) return `missing: expected ${typeName(issue.expected)}`;
    return `expected ${typeName(issue.expected)}, got ${show(value)}`;
  }
  if (issue.code === 'invalid_union') {
    const expected = issue.errors
      .map((branch) => branch[0])
      .filter((first) => first?.code === 'invalid_type' && first.path.length === 0)
      .map((first) => typeName((first as z.core.$ZodIssueInvalidType).expected));
    if (expected.length === issue.errors.length)
      return `expected ${[...new Set(expected)].join(' or ')}, got ${show(value)}`;
  }
  const message = issue.message.replace(/^Invalid (input|option): /, '');
  return value === undefined ? message : `${message}, got ${show(value)}`;
}

/** Issues in the file's order; those without a line keep their order, after the others. */
function sortIssues(issues: InputIssue[]): InputIssue[] {
  return issues
    .map((issue, index) => ({ issue, index }))
    .sort((a, b) => (a.issue.line ?? Infinity) - (b.issue.line ?? Infinity) || a.index - b.index)
    .map(({ issue }) => issue);
}

function policy(mode: string | undefined, hosts: string[] | undefined): NetworkPolicy | undefined {
  if (mode === undefined) return undefined;
  if (mode === 'allowlist') return { mode: 'allowlist', allowedHosts: hosts ?? [] };
  return { mode: mode as 'public' | 'no-network' };
}

/** How Harbor's pydantic models read a field in lax mode. */
type LaxType = 'float' | 'int' | 'bool';

const HEALTHCHECK_FIELDS: Record<string, LaxType> = {
  interval_sec: 'float',
  timeout_sec: 'float',
  start_period_sec: 'float',
  start_interval_sec: 'float',
  retries: 'int',
};
const ENVIRONMENT_FIELDS: Record<string, LaxType | Record<string, LaxType>> = {
  build_timeout_sec: 'float',
  cpus: 'int',
  memory_mb: 'int',
  storage_mb: 'int',
  gpus: 'int',
  allow_internet: 'bool',
  healthcheck: HEALTHCHECK_FIELDS,
};
/** The fields of Harbor's TaskConfig (src/harbor/models/task/config.py) that pydantic converts. */
const LAX_FIELDS: Record<string, LaxType | Record<string, unknown>> = {
  agent: { timeout_sec: 'float' },
  verifier: { timeout_sec: 'float', implemented: 'bool', environment: ENVIRONMENT_FIELDS },
  environment: ENVIRONMENT_FIELDS,
};
const STEP_FIELDS: Record<string, LaxType | Record<string, unknown>> = {
  agent: { timeout_sec: 'float' },
  verifier: { timeout_sec: 'float' },
  healthcheck: HEALTHCHECK_FIELDS,
  min_reward: 'float',
};

const FLOAT_TEXT = /^\s*[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?\s*$/;
const INT_TEXT = /^\s*[+-]?\d+\s*$/;
const TRUE_TEXT = new Set(['true', 't', 'yes', 'y', 'on', '1']);
const FALSE_TEXT = new Set(['false', 'f', 'no', 'n', 'off', '0']);

/** The value pydantic's lax mode reads, or undefined when it would refuse it (or it needs no change). */
function laxValue(type: LaxType, value: unknown): number | boolean | undefined {
  if (type === 'bool') {
    if (typeof value === 'string') {
      const t = value.trim().toLowerCase();
      return TRUE_TEXT.has(t) ? true : FALSE_TEXT.has(t) ? false : undefined;
    }
    if (value === 0 || value === 1) return value === 1;
    return undefined;
  }
  if (typeof value === 'string') {
    if (type === 'int' ? !INT_TEXT.test(value) : !FLOAT_TEXT.test(value)) return undefined;
    return Number(value.trim());
  }
  // Numbers need no change (TOML's `2.0` is the number 2, which an integer field takes).
  return undefined;
}

/**
 * Harbor reads task.toml with pydantic, which converts some values given in another type (lax
 * mode): a number written as a string (`timeout_sec = "120"`), a boolean written as a string or
 * 0/1 (`allow_internet = "false"`). berth converts the same values, in place, and warns on the
 * line (`task.toml:5: agent.timeout_sec: ...`); a value Harbor refuses is still refused by the schema.
 */
function coerceAsHarbor(data: Record<string, unknown>, warn: Warn): void {
  const visit = (node: unknown, fields: Record<string, unknown>, path: Array<string | number>): void => {
    if (node === null || typeof node !== 'object' || Array.isArray(node)) return;
    const table = node as Record<string, unknown>;
    for (const [key, spec] of Object.entries(fields)) {
      if (!(key in table)) continue;
      if (typeof spec === 'object') {
        visit(table[key], spec as Record<string, unknown>, [...path, key]);
        continue;
      }
      const value = table[key];
      // `min_reward` may be one number or a table of them, one per reward key.
      if (key === 'min_reward' && value !== null && typeof value === 'object' && !Array.isArray(value)) {
        visit(value, Object.fromEntries(Object.keys(value).map((k) => [k, 'float'])), [...path, key]);
        continue;
      }
      const converted = laxValue(spec as LaxType, value);
      if (converted === undefined) continue;
      table[key] = converted;
      warn(
        [...path, key],
        `${show(value)} is read as ${show(converted)}, as Harbor does (write ${show(converted)})`,
      );
    }
  };
  visit(data, LAX_FIELDS, []);
  if (Array.isArray(data.steps))
    for (const [i, step] of data.steps.entries()) visit(step, STEP_FIELDS, ['steps', i]);
}

/**
 * Parses and normalises a task.toml.
 * @param text the file's content
 * @param file the path, for error messages
 * @throws InputError (exit 2) naming file, line and key on a TOML syntax error or a schema violation
 */
export function parseTaskToml(text: string, file: string): HarborTaskConfig {
  const data = parseTomlInput(text, file);
  const lineOf = tomlKeyLines(text);
  const issueAt = (path: ReadonlyArray<string | number>, message: string): InputIssue => ({
    file,
    line: lineOf(path),
    field: fieldPath(path),
    message,
  });
  const warningIssues: InputIssue[] = [];
  const warn: Warn = (path, message) => warningIssues.push(issueAt([...path], message));
  coerceAsHarbor(data, warn);
  const parsed = taskTomlSchema.safeParse(data);
  if (!parsed.success) {
    // Every schema violation, in the file's order (issues without a line last).
    const issues = parsed.error.issues.map((issue) =>
      issueAt(issue.path as Array<string | number>, describeIssue(issue, valueAt(data, issue.path))),
    );
    throw InputError.all(sortIssues(issues));
  }
  const t = parsed.data;
  const problems: InputIssue[] = [];
  const fail = (path: string[], message: string): void => {
    problems.push(issueAt(path, message));
  };
  const env = t.environment ?? {};

  // Legacy sizes, as Harbor's `_migrate_legacy_resource_fields`.
  let memoryMb = env.memory_mb;
  if (env.memory !== undefined) {
    warn(['environment', 'memory'], 'deprecated; use `memory_mb`');
    const mb = parseSizeToMb(env.memory);
    if (memoryMb !== undefined && memoryMb !== mb)
      fail(['environment', 'memory'], `conflicting \`memory\` (${mb} MB) and \`memory_mb\` (${memoryMb})`);
    memoryMb ??= mb;
  }
  let storageMb = env.storage_mb;
  if (env.storage !== undefined) {
    warn(['environment', 'storage'], 'deprecated; use `storage_mb`');
    const mb = parseSizeToMb(env.storage);
    if (storageMb !== undefined && storageMb !== mb)
      fail(
        ['environment', 'storage'],
        `conflicting \`storage\` (${mb} MB) and \`storage_mb\` (${storageMb})`,
      );
    storageMb ??= mb;
  }

  // Network: allowlist needs hosts; hosts need allowlist (Harbor's `_validate_network_policy_fields`).
  for (const [section, fields] of [
    ['environment', env],
    ['agent', t.agent ?? {}],
    ['verifier', t.verifier ?? {}],
  ] as const) {
    const f = fields as { network_mode?: string; allowed_hosts?: string[] };
    if (f.allowed_hosts !== undefined && f.network_mode !== 'allowlist') {
      fail([section, 'allowed_hosts'], '`allowed_hosts` is only valid with network_mode = "allowlist"');
    }
  }
  // Legacy `allow_internet` applies only when `network_mode` / `allowed_hosts` are absent.
  let network = policy(env.network_mode, env.allowed_hosts);
  if (env.allow_internet !== undefined) {
    warn(['environment', 'allow_internet'], 'deprecated; use `network_mode`');
    network ??= env.allow_internet ? { mode: 'public' } : { mode: 'no-network' };
  }
  network ??= { mode: 'public' };

  if (t.verifier?.environment_mode === 'shared' && t.verifier.environment) {
    fail(
      ['verifier', 'environment_mode'],
      '`environment_mode = "shared"` cannot be combined with [verifier.environment]',
    );
  }
  if (t.version !== undefined && t.schema_version === undefined)
    warn(['version'], 'the legacy name of `schema_version`');
  // Unknown top-level keys and tables: Harbor's pydantic TaskConfig ignores extra fields, so
  // they are not refused (a task Harbor runs, berth runs), but a typo such as `[verifierr]`
  // would silently drop its settings, so each is warned about on its line.
  for (const key of Object.keys(data)) {
    if (TOP_LEVEL_KEYS.includes(key)) continue;
    warn([key], unknownKey(closestName(key, TOP_LEVEL_KEYS)));
  }
  unknownKeyWarnings(data, warn);

  if (problems.length > 0) throw InputError.all(sortIssues(problems));

  const metadata = { ...(t.metadata ?? {}) } as Record<string, unknown>;
  const source = t.metadata?.source as Record<string, unknown> | undefined;
  return {
    schemaVersion: t.schema_version ?? t.version,
    name: t.task?.name,
    agentTimeoutSec: t.agent?.timeout_sec,
    agentUser: t.agent?.user,
    agentNetwork: policy(t.agent?.network_mode, t.agent?.allowed_hosts),
    verifierTimeoutSec: t.verifier?.timeout_sec ?? 600,
    verifierEnv: t.verifier?.env ?? {},
    verifierUser: t.verifier?.user,
    verifierNetwork: policy(t.verifier?.network_mode, t.verifier?.allowed_hosts),
    verifierImplemented: t.verifier?.implemented,
    verifierMode: t.verifier?.environment_mode ?? (t.verifier?.environment ? 'separate' : 'shared'),
    solutionEnv: t.solution?.env ?? {},
    buildTimeoutSec: env.build_timeout_sec ?? 600,
    dockerImage: env.docker_image,
    os: env.os ?? 'linux',
    cpus: env.cpus,
    memoryMb,
    storageMb,
    gpus: env.gpus,
    ...(env.gpu_types ? { gpuTypes: env.gpu_types } : {}),
    ...(env.tpu ? { tpu: { type: env.tpu.type, topology: env.tpu.topology } } : {}),
    mcpServers: (env.mcp_servers ?? []).map((m) => ({
      name: m.name,
      transport: (m.transport ?? 'sse') as McpServer['transport'],
      ...(m.url !== undefined ? { url: m.url } : {}),
      ...(m.command !== undefined ? { command: m.command } : {}),
      args: m.args ?? [],
    })),
    ...(env.skills_dir ? { skillsDir: env.skills_dir } : {}),
    workdir: env.workdir,
    network,
    environmentEnv: env.env ?? {},
    source,
    metadata,
    steps: t.steps,
    artifacts: t.artifacts ?? [],
    // Warnings say where they are as errors do (`FILE:LINE: field: message`), in the file's order.
    warnings: sortIssues(warningIssues).map(formatIssue),
    raw: data,
  };
}
