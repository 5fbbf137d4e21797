/**
 * The model gateway from inside environments, with the real Docker engine and the local
 * sandbox: a `no-network` Harbor task reaches the gateway (through the relay on its Unix
 * socket) and nothing else; deckhand solves the bundled Harbor example task with a right
 * script and not with a wrong one; the real key never enters an environment or a file.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import {
  type ReceivedRequest,
  type ScriptStep,
  startScriptedModelServer,
} from '../helpers/scripted-model-server.ts';
import { BASE_IMAGE, skipDocker, tempDir } from './helpers.ts';

const bin = fileURLToPath(new URL('../../bin/berth.js', import.meta.url));
const task = fileURLToPath(new URL('../../examples/agents/edit-and-run', import.meta.url));
const sample = fileURLToPath(new URL('../../examples/swe-dockerless.jsonl', import.meta.url));
const KEY = 'sk-docker-MARKER-51c2d3e4f5';
const jobs = tempDir('berth-gw-docker-');
afterAll(async () => {
  await execa('node', [bin, 'clean', '--job', 'gw-no-network'], { reject: false });
});

async function berth(args: string[]) {
  const result = await execa('node', [bin, ...args], {
    reject: false,
    env: { ...process.env, CI: '1', OPENAI_API_KEY: KEY, ANTHROPIC_API_KEY: KEY },
  });
  return { code: result.exitCode, stdout: result.stdout, stderr: result.stderr };
}

function allText(dir: string): string {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => readFileSync(join(e.parentPath, e.name), 'latin1'))
    .join('\n');
}

/**
 * The agent command: asks the model (through $OPENAI_BASE_URL, the relay) for greet.py's new
 * text, writes it, runs record.sh; then tries to reach anything else and prints what happened.
 */
const CLIENT = `
import json, os, socket, urllib.request
base = os.environ["OPENAI_BASE_URL"]
req = urllib.request.Request(base + "/chat/completions", method="POST",
  data=json.dumps({"model": "x", "messages": [{"role": "user", "content": open(os.environ["BERTH_INSTRUCTION_FILE"]).read()}]}).encode(),
  headers={"authorization": "Bearer " + os.environ["OPENAI_API_KEY"], "content-type": "application/json"})
answer = json.load(urllib.request.urlopen(req, timeout=60))["choices"][0]["message"]["content"]
open("/app/greet.py", "w").write(answer)
os.system("cd /app && ./record.sh")
print("base", base)
for host, port in [("172.17.0.1", int(os.environ["GW_PORT"])), ("1.1.1.1", 53), ("8.8.8.8", 443)]:
    try:
        socket.create_connection((host, port), timeout=3).close(); print("outside", host, "reached")
    except OSError as e:
        print("outside", host, "blocked")
print("env", json.dumps(dict(os.environ)))
`;

describe.skipIf(skipDocker)('the model gateway from a no-network container', () => {
  it('a command agent reaches the model through the relay and nothing else; reward 1; the key stays out', async () => {
    const server = await startScriptedModelServer([
      { reply: { text: 'print("hello, berth")\n', usage: { input: 40, output: 9 } } },
    ]);
    try {
      const port = new URL(server.url).port;
      const run = await berth([
        'run',
        '-p',
        task,
        '-a',
        'command',
        '-m',
        'openai/gpt-4o',
        '--model-base-url',
        `${server.url}/v1`,
        '--agent-command',
        `GW_PORT=${port} python3 -c '${CLIENT.replace(/'/g, `'\\''`)}'`,
        '--image-map',
        `debian:bookworm-slim=${BASE_IMAGE}`,
        '--jobs-dir',
        jobs,
        '--job-name',
        'gw-no-network',
      ]);
      expect(run.stdout).toContain('resolved 1/1');
      expect(run.code).toBe(0);
      const trial = join(
        jobs,
        'gw-no-network',
        readdirSync(join(jobs, 'gw-no-network')).find((d) => d.startsWith('edit-and-run')) as string,
      );
      const stdout = readFileSync(join(trial, 'agent', 'command', 'stdout.txt'), 'utf8');
      expect(stdout).toMatch(/^base http:\/\/127\.0\.0\.1:\d+\/v1$/m);
      expect(stdout).toContain('outside 172.17.0.1 blocked');
      expect(stdout).toContain('outside 1.1.1.1 blocked');
      expect(stdout).toContain('outside 8.8.8.8 blocked');
      expect(server.requests).toHaveLength(1);
      expect(server.requests[0]?.headers.authorization).toBe(`Bearer ${KEY}`);
      const result = JSON.parse(readFileSync(join(trial, 'result.json'), 'utf8'));
      expect(result.agent_result).toMatchObject({ n_input_tokens: 40, n_output_tokens: 9 });
      expect(
        JSON.parse(readFileSync(join(trial, 'agent', 'trajectory.json'), 'utf8')).steps.at(-1),
      ).toMatchObject({ source: 'agent', message: 'print("hello, berth")\n' });
      // The environment's variables (printed whole by the agent) and every file of the job lack the key.
      expect(stdout).toMatch(/^env \{.*"OPENAI_API_KEY": "berth-/m);
      expect(allText(join(jobs, 'gw-no-network'))).not.toContain(KEY);
    } finally {
      await server.close();
    }
  });

  it('deckhand solves the Harbor example task with a right script, not with a wrong one', async () => {
    const right = (request: ReceivedRequest): ScriptStep => {
      const turn = (request.body.messages as Array<{ role: string }>).filter((m) => m.role === 'tool').length;
      if (turn === 0)
        return {
          reply: {
            toolCalls: [
              {
                name: 'edit',
                input: {
                  command: 'str_replace',
                  path: '/app/greet.py',
                  old_str: 'hello, world',
                  new_str: 'hello, berth',
                },
              },
            ],
          },
        };
      if (turn === 1)
        return {
          reply: {
            toolCalls: [{ name: 'bash', input: { command: 'cd /app && ./record.sh && cat record.log' } }],
          },
        };
      return { reply: { toolCalls: [{ name: 'finish', input: { summary: 'done' } }] } };
    };
    const wrong = (): ScriptStep => ({
      reply: { toolCalls: [{ name: 'finish', input: { summary: 'nothing to do' } }] },
    });
    for (const [name, script, expected] of [
      ['right', right, 'resolved 1/1'],
      ['wrong', wrong, 'resolved 0/1'],
    ] as const) {
      const server = await startScriptedModelServer(script);
      try {
        const run = await berth([
          'run',
          '-p',
          task,
          '-a',
          'deckhand',
          '-m',
          'openai/gpt-4o',
          '--model-base-url',
          `${server.url}/v1`,
          '--image-map',
          `debian:bookworm-slim=${BASE_IMAGE}`,
          '--jobs-dir',
          jobs,
          '--job-name',
          `gw-deckhand-${name}`,
        ]);
        expect(run.stdout).toContain(expected);
        expect(run.code).toBe(0);
      } finally {
        await server.close();
      }
    }
  });
});

// Claude Code and Codex through `berth run` (the relay on the gateway socket, the key kept out
// of the job): their solved trials in test/docker/installed-agents-run.test.ts.

describe.skipIf(skipDocker)('deckhand on a multilingual task', () => {
  it('solves kvconf (Go) with a right script, not with a wrong one', async (ctx) => {
    const image = await execa('docker', ['image', 'inspect', 'berth-multilingual:bookworm'], {
      reject: false,
    });
    if (image.exitCode !== 0)
      return ctx.skip(
        'no berth-multilingual:bookworm image: build it with examples/multilingual/image/build-image.sh',
      );
    const dir = fileURLToPath(
      new URL('../../examples/multilingual/sample_tasks/berth-examples__kvconf__19e8d33a', import.meta.url),
    );
    const patch = readFileSync(join(dir, 'solution', 'fix.patch'), 'utf8');
    for (const right of [true, false]) {
      const server = await startScriptedModelServer((request) => {
        const turn = (request.body.messages as Array<{ role: string }>).filter(
          (m) => m.role === 'tool',
        ).length;
        if (turn === 0 && right)
          return {
            reply: { toolCalls: [{ name: 'bash', input: { command: `git apply <<'EOF'\n${patch}EOF` } }] },
          };
        return { reply: { toolCalls: [{ name: 'finish', input: { summary: 'done' } }] } };
      });
      try {
        const run = await berth([
          'run',
          '-p',
          dir,
          '-a',
          'deckhand',
          '-m',
          'openai/gpt-4o',
          '--model-base-url',
          `${server.url}/v1`,
          '--jobs-dir',
          jobs,
          '--job-name',
          `gw-multilingual-${right}`,
        ]);
        expect(run.stdout).toContain(right ? 'resolved 1/1' : 'resolved 0/1');
      } finally {
        await server.close();
      }
    }
  });
});

describe('the model gateway from the local sandbox', () => {
  it('a sandboxed command reaches the gateway through the relay, not the host network', async () => {
    const server = await startScriptedModelServer([{ reply: { text: 'hi from the model' } }]);
    try {
      const port = new URL(server.url).port;
      const script = `
import json, os, socket, urllib.request
req = urllib.request.Request(os.environ["OPENAI_BASE_URL"] + "/chat/completions", method="POST",
  data=json.dumps({"model": "x", "messages": [{"role": "user", "content": "hi"}]}).encode(),
  headers={"authorization": "Bearer " + os.environ["OPENAI_API_KEY"], "content-type": "application/json"})
print("answer", json.load(urllib.request.urlopen(req, timeout=60))["choices"][0]["message"]["content"])
try:
    socket.create_connection(("127.0.0.1", int(os.environ["UP_PORT"])), timeout=3).close(); print("upstream reached")
except OSError:
    print("upstream blocked")
`;
      const run = await berth([
        'run',
        '-p',
        sample,
        '-i',
        'berth__toposort-1',
        '-a',
        'command',
        '-m',
        'openai/gpt-4o',
        '--model-base-url',
        `${server.url}/v1`,
        '--agent-command',
        `UP_PORT=${port} python3 -c '${script.replace(/'/g, `'\\''`)}'`,
        '--jobs-dir',
        jobs,
        '--job-name',
        'gw-local',
      ]);
      expect(run.code).toBe(0);
      const stdout = readFileSync(
        join(jobs, 'gw-local', 'berth__toposort-1__1', 'agent', 'command', 'stdout.txt'),
        'utf8',
      );
      expect(stdout).toContain('answer hi from the model');
      const isolated = JSON.parse(
        readFileSync(join(jobs, 'gw-local', 'berth__toposort-1__1', 'result.json'), 'utf8'),
      ).berth.isolated;
      // In the sandbox the upstream (on the host's loopback) is out of reach; without one, the host's network is shared.
      expect(stdout).toContain(isolated ? 'upstream blocked' : 'upstream reached');
    } finally {
      await server.close();
    }
  });
});
