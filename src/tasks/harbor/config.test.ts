// biome-ignore-all lint/suspicious/noTemplateCurlyInString: Harbor's ${VAR} templates in task.toml text
import { describe, expect, it } from 'vitest';
import { InputError } from '../../errors.ts';
import { stripCanary } from './canary.ts';
import { lineOfKey, parseSizeToMb, parseTaskToml } from './config.ts';

/** The early form: `version`, `memory = "2G"`, `allow_internet` (Harbor 2025-10, Terminal-Bench migrations). */
const legacy = `version = "1.0"

[metadata]
author_name = "someone"
difficulty = "easy"

[agent]
timeout_sec = 600.0

[verifier]
timeout_sec = 120.0

[environment]
build_timeout_sec = 600.0
cpus = 1
memory = "2G"
storage = "4G"
allow_internet = false
`;

/** The Kotlin Benchmark form: [metadata.source], [verifier] implemented, memory_mb, allow_internet = true. */
const kotlin = `[metadata.source]
repository_owner = "GradleUp"
repository_name = "shadow"
repository_url = "https://github.com/GradleUp/shadow"
license = "Apache-2.0"
code_change_url = "https://github.com/GradleUp/shadow/pull/1313"

[verifier]
implemented = false
timeout_sec = 900.0

[agent]
timeout_sec = 1800.0

[environment]
build_timeout_sec = 1800.0
cpus = 4
memory_mb = 10240
allow_internet = true
`;

/** The current form (schema 1.3): [task], network_mode, allowlist, unknown keys. */
const current = `schema_version = "1.3"
artifacts = ["/logs/artifacts/x.txt"]
future_key = "kept"

[task]
name = "harbor/example"
keywords = ["a"]

[environment]
network_mode = "no-network"
memory_mb = 2048
storage_mb = 10240
docker_image = "example:1"
workdir = "/app"

[agent]
network_mode = "allowlist"
allowed_hosts = ["repo.maven.apache.org", "*.gradle.org"]

[verifier]
timeout_sec = 60.0
network_mode = "public"

[verifier.env]
MODE = "strict"

[solution.env]
X = "1"
`;

describe('task.toml forms', () => {
  it('reads the legacy form', () => {
    const c = parseTaskToml(legacy, 'task.toml');
    expect(c.schemaVersion).toBe('1.0');
    expect(c.memoryMb).toBe(2048);
    expect(c.storageMb).toBe(4096);
    expect(c.network).toEqual({ mode: 'no-network' });
    expect(c.agentTimeoutSec).toBe(600);
    expect(c.verifierTimeoutSec).toBe(120);
    expect(c.warnings.join(' ')).toMatch(/allow_internet/);
    expect(c.metadata.author_name).toBe('someone');
  });

  it('reads the Kotlin Benchmark form and its provenance', () => {
    const c = parseTaskToml(kotlin, 'task.toml');
    expect(c.network).toEqual({ mode: 'public' });
    expect(c.memoryMb).toBe(10240);
    expect(c.cpus).toBe(4);
    expect(c.verifierImplemented).toBe(false);
    expect(c.source?.license).toBe('Apache-2.0');
    expect(c.buildTimeoutSec).toBe(1800);
  });

  it('reads the current form, keeps unknown keys, defaults the verifier timeout', () => {
    const c = parseTaskToml(current, 'task.toml');
    expect(c.name).toBe('harbor/example');
    expect(c.network).toEqual({ mode: 'no-network' });
    expect(c.agentNetwork).toEqual({
      mode: 'allowlist',
      allowedHosts: ['repo.maven.apache.org', '*.gradle.org'],
    });
    expect(c.verifierNetwork).toEqual({ mode: 'public' });
    expect(c.verifierEnv).toEqual({ MODE: 'strict' });
    expect(c.solutionEnv).toEqual({ X: '1' });
    expect(c.raw.future_key).toBe('kept');
    expect(c.dockerImage).toBe('example:1');
    expect(c.workdir).toBe('/app');
    expect(parseTaskToml('', 't').verifierTimeoutSec).toBe(600);
    expect(parseTaskToml('', 't').agentTimeoutSec).toBeUndefined();
  });

  it('network_mode wins over legacy allow_internet', () => {
    const c = parseTaskToml('[environment]\nallow_internet = true\nnetwork_mode = "no-network"\n', 't');
    expect(c.network).toEqual({ mode: 'no-network' });
  });

  it('parses sizes as Harbor does', () => {
    expect(parseSizeToMb('2G')).toBe(2048);
    expect(parseSizeToMb('512m')).toBe(512);
    expect(parseSizeToMb('1.5G')).toBe(1536);
    expect(parseSizeToMb('2048K')).toBe(2);
  });
});

describe('bad task.toml -> InputError with file, line and key', () => {
  function error(text: string): InputError {
    try {
      parseTaskToml(text, 'tasks/x/task.toml');
    } catch (e) {
      expect(e).toBeInstanceOf(InputError);
      return e as InputError;
    }
    throw new Error('expected an InputError');
  }

  it('a TOML syntax error names its line', () => {
    const e = error('[agent]\ntimeout_sec = 1\ntimeout_sec = 2\n');
    expect(e.location.line).toBe(3);
    expect(e.exitCode).toBe(2);
    expect(e.message).toMatch(/tasks\/x\/task.toml:3/);
  });

  it('a wrong type names the line and key', () => {
    const e = error('version = "1.0"\n\n[environment]\ncpus = 1\nmemory_mb = "lots"\n');
    expect(e.location).toEqual({ file: 'tasks/x/task.toml', line: 5, field: 'environment.memory_mb' });
  });

  it('a bad network mode, a bad size, hosts without allowlist', () => {
    expect(error('[agent]\nnetwork_mode = "internet"\n').location).toMatchObject({
      line: 2,
      field: 'agent.network_mode',
    });
    expect(error('[environment]\nmemory = "lots"\n').location).toMatchObject({
      line: 2,
      field: 'environment.memory',
    });
    expect(error('[verifier]\nallowed_hosts = ["a.com"]\n').location).toMatchObject({
      line: 2,
      field: 'verifier.allowed_hosts',
    });
    expect(
      error('[agent]\nnetwork_mode = "allowlist"\nallowed_hosts = ["https://a.com/x"]\n').location,
    ).toMatchObject({ line: 3 });
    expect(error('[environment]\nmemory = "1G"\nmemory_mb = 4096\n').message).toMatch(/conflicting/);
    expect(error('[task]\nname = "no-slash"\n').location).toMatchObject({ line: 2, field: 'task.name' });
  });

  it('finds dotted keys and keys in nested tables', () => {
    const text =
      '[environment]\ncpus = 1\n[environment.healthcheck]\ncommand = "x"\n[metadata]\nsource.license = "MIT"\n';
    expect(lineOfKey(text, ['environment', 'healthcheck', 'command'])).toBe(4);
    expect(lineOfKey(text, ['metadata', 'source', 'license'])).toBe(6);
  });
});

describe('bad task.toml: every problem is reported, each with its own line and key', () => {
  function error(text: string): InputError {
    try {
      parseTaskToml(text, 'task.toml');
    } catch (e) {
      expect(e).toBeInstanceOf(InputError);
      return e as InputError;
    }
    throw new Error('expected an InputError');
  }

  it('four type errors in three tables: four lines, in file order, exit 2', () => {
    const text = [
      'version = "1.0"', // 1
      '', // 2
      '[agent]', // 3
      'timeout_sec = "long"', // 4
      '', // 5
      '[environment]', // 6
      '# a comment with cpus = 4 in it', // 7
      'memory_mb = 1.5', // 8
      'cpus = "two"', // 9
      'network_mode = "internet"', // 10
    ].join('\n');
    const e = error(text);
    expect(e.exitCode).toBe(2);
    expect(e.issues.map((i) => [i.line, i.field])).toEqual([
      [4, 'agent.timeout_sec'],
      [8, 'environment.memory_mb'],
      [9, 'environment.cpus'],
      [10, 'environment.network_mode'],
    ]);
    expect(e.location).toEqual({ file: 'task.toml', line: 4, field: 'agent.timeout_sec' });
    expect(e.message.split('\n')).toEqual([
      'task.toml: 4 problems:',
      '  task.toml:4: agent.timeout_sec: expected a number, got "long"',
      '  task.toml:8: environment.memory_mb: expected an integer, got 1.5',
      '  task.toml:9: environment.cpus: expected a number, got "two"',
      '  task.toml:10: environment.network_mode: expected one of "public"|"no-network"|"allowlist", got "internet"',
    ]);
  });

  it('the n-th [[steps]] table, inline tables and multi-line arrays get their own lines', () => {
    const text = [
      '[[steps]]', // 1
      'name = "one"', // 2
      '[steps.agent]', // 3
      'timeout_sec = 10', // 4
      '[[steps]]', // 5
      'name = 2', // 6
      '[steps.agent]', // 7
      'timeout_sec = "slow"', // 8
      '[environment]', // 9
      'env = { A = "x", B = 3 }', // 10
      'gpu_types = [', // 11
      '  "a100",', // 12
      '  7,', // 13
      ']', // 14
    ].join('\n');
    const e = error(text);
    expect(e.issues.map((i) => [i.line, i.field, i.message])).toEqual([
      [6, 'steps[1].name', 'expected a string, got 2'],
      [8, 'steps[1].agent.timeout_sec', 'expected a number, got "slow"'],
      [10, 'environment.env.B', 'expected a string, got 3'],
      [13, 'environment.gpu_types[1]', 'expected a string, got 7'],
    ]);
  });

  it('a missing key gets no line (not the table header), and is listed after the placed ones', () => {
    const e = error('[task]\ndescription = "d"\n\n[agent]\nuser = 1.5\n');
    expect(e.issues.map((i) => [i.line, i.field, i.message])).toEqual([
      [5, 'agent.user', 'expected a string or an integer, got 1.5'],
      [undefined, 'task.name', 'missing: expected a string'],
    ]);
    expect(e.message).toContain('\n  task.toml: task.name: missing: expected a string');
  });

  it('a key-like line inside a multi-line string is not taken for the key', () => {
    const text = '[environment]\nnotes = """\ncpus = 1\n"""\ncpus = "two"\n';
    expect(error(text).location).toEqual({ file: 'task.toml', line: 5, field: 'environment.cpus' });
  });

  it('rule violations after the schema are all reported too', () => {
    const e = error(
      '[environment]\nmemory = "1G"\nmemory_mb = 4096\n[verifier]\nallowed_hosts = ["a.com"]\n[agent]\nallowed_hosts = ["b.com"]\n',
    );
    expect(e.issues.map((i) => [i.line, i.field])).toEqual([
      [2, 'environment.memory'],
      [5, 'verifier.allowed_hosts'],
      [7, 'agent.allowed_hosts'],
    ]);
  });
});

describe('canary lines', () => {
  it('strips leading canary comments and the blank lines after them, as Harbor does', () => {
    const text =
      '<!-- BENCHMARK DATA canary GUID 1234 -->\n# terminal-bench-canary GUID 5678\n\nDo the thing.\n# canary in the body stays\n';
    expect(stripCanary(text)).toBe('Do the thing.\n# canary in the body stays\n');
    expect(stripCanary('No canary.\n')).toBe('No canary.\n');
  });
});

describe('values Harbor accepts by coercion (pydantic lax mode, issue 12)', () => {
  const text = [
    'version = "1.0"', // 1
    '[agent]', // 2
    'timeout_sec = "120"', // 3
    '[verifier]', // 4
    'timeout_sec = " 60.5 "', // 5
    'implemented = 1', // 6
    '[environment]', // 7
    'cpus = "2"', // 8
    'memory_mb = "1024"', // 9
    'allow_internet = "false"', // 10
    '[environment.healthcheck]', // 11
    'command = "true"', // 12
    'retries = "5"', // 13
    '[[steps]]', // 14
    'name = "one"', // 15
    'min_reward = { reward = "0.5" }', // 16
    '[steps.agent]', // 17
    'timeout_sec = "30"', // 18
  ].join('\n');

  it('reads them as Harbor does, each with a warning naming its line', () => {
    const config = parseTaskToml(text, 'task.toml');
    expect(config).toMatchObject({
      agentTimeoutSec: 120,
      verifierTimeoutSec: 60.5,
      verifierImplemented: true,
      cpus: 2,
      memoryMb: 1024,
      network: { mode: 'no-network' },
    });
    expect(config.steps?.[0]).toMatchObject({ min_reward: { reward: 0.5 }, agent: { timeout_sec: 30 } });
    expect((config.raw.environment as { healthcheck: { retries: unknown } }).healthcheck.retries).toBe(5);
    const coerced = config.warnings.filter((w) => w.includes('as Harbor does'));
    expect(coerced.map((w) => w.split(':')[1])).toEqual(['3', '5', '6', '8', '9', '10', '13', '16', '18']);
    // The form of every input message (src/errors.ts): FILE:LINE: field: message.
    expect(coerced[0]).toBe(
      'task.toml:3: agent.timeout_sec: "120" is read as 120, as Harbor does (write 120)',
    );
  });

  it('what Harbor refuses stays refused, naming the line', () => {
    for (const [bad, line, field] of [
      ['[agent]\ntimeout_sec = "two minutes"', 2, 'agent.timeout_sec'],
      ['[environment]\ncpus = "2.5"', 2, 'environment.cpus'],
      ['[environment]\nallow_internet = "maybe"', 2, 'environment.allow_internet'],
    ] as const) {
      let caught: unknown;
      try {
        parseTaskToml(bad, 'task.toml');
      } catch (e) {
        caught = e;
      }
      expect(caught, bad).toBeInstanceOf(InputError);
      expect((caught as InputError).location).toMatchObject({ line, field });
    }
  });
});

describe('issue 19: every field of every table', () => {
  it('warns about unknown keys inside known tables, on their line, with the nearest known key', () => {
    const text = [
      'schema_version = "1.3"',
      '[agent]',
      'timeout_secs = 60',
      '[environment]',
      'cpu = 2',
      'memory_mb = 512',
      '[environment.healthcheck]',
      'command = "true"',
      'retry = 3',
      '[[environment.mcp_servers]]',
      'name = "m"',
      'transport = "http"',
      'url = "http://m:8000/mcp"',
      'headers = "x"',
      '[metadata]',
      'anything = "goes"',
      '[[steps]]',
      'name = "one"',
      'min_rewards = 1',
      '[steps.verifier]',
      'timeout = 5',
      '[environment.env]',
      'ANY_NAME = "is a variable, not a key"',
    ].join('\n');
    const c = parseTaskToml(text, 't/task.toml');
    const unknown = c.warnings.filter((w) => w.includes('unknown key'));
    expect(unknown).toEqual([
      't/task.toml:3: agent.timeout_secs: unknown key, ignored as Harbor ignores unknown keys (did you mean `agent.timeout_sec`?)',
      't/task.toml:5: environment.cpu: unknown key, ignored as Harbor ignores unknown keys (did you mean `environment.cpus`?)',
      't/task.toml:9: environment.healthcheck.retry: unknown key, ignored as Harbor ignores unknown keys (did you mean `environment.healthcheck.retries`?)',
      't/task.toml:14: environment.mcp_servers[0].headers: unknown key, ignored as Harbor ignores unknown keys',
      't/task.toml:19: steps[0].min_rewards: unknown key, ignored as Harbor ignores unknown keys (did you mean `steps[0].min_reward`?)',
      't/task.toml:21: steps[0].verifier.timeout: unknown key, ignored as Harbor ignores unknown keys (did you mean `steps[0].verifier.timeout_sec`?)',
    ]);
    // `http` is Harbor's other name of streamable-http
    expect(c.mcpServers).toEqual([
      { name: 'm', transport: 'streamable-http', url: 'http://m:8000/mcp', args: [] },
    ]);
  });

  it('reads gpu_types, [environment.tpu], skills_dir and [environment] env', () => {
    const c = parseTaskToml(
      [
        '[environment]',
        'gpus = 2',
        'gpu_types = ["H100"]',
        'skills_dir = "/skills"',
        '[environment.tpu]',
        'type = "v6e"',
        'topology = " 2x4 "',
        '[environment.env]',
        'A = "${HOME:-x}"',
      ].join('\n'),
      't/task.toml',
    );
    expect(c.gpus).toBe(2);
    expect(c.gpuTypes).toEqual(['H100']);
    expect(c.tpu).toEqual({ type: 'v6e', topology: '2x4' });
    expect(c.skillsDir).toBe('/skills');
    expect(c.environmentEnv).toEqual({ A: '${HOME:-x}' });
    expect(c.warnings).toEqual([]);
  });

  it('refuses an MCP server without what its transport needs, and a bad TPU topology, on their lines', () => {
    const bad = () =>
      parseTaskToml(
        [
          '[environment]',
          '[[environment.mcp_servers]]',
          'name = "web"',
          'transport = "sse"',
          '[[environment.mcp_servers]]',
          'name = "local"',
          'transport = "stdio"',
          '[[environment.mcp_servers]]',
          'name = "odd"',
          'transport = "websocket"',
          'url = "ws://x"',
          '[environment.tpu]',
          'type = "v6e"',
          'topology = "2by4"',
        ].join('\n'),
        't/task.toml',
      );
    expect(bad).toThrow(InputError);
    const message = (() => {
      try {
        bad();
      } catch (e) {
        return (e as Error).message;
      }
      return '';
    })();
    expect(message).toContain('`url` is required for transport "sse"');
    expect(message).toContain('`command` is required for transport "stdio"');
    expect(message).toMatch(/:10: environment\.mcp_servers\[2\]\.transport/);
    expect(message).toMatch(/:14: environment\.tpu\.topology: expected a topology like "2x4"/);
  });
});
