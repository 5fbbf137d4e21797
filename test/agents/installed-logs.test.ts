/**
 * The installed agents' own logs (recorded from the real CLIs: test/fixtures/installed/) are
 * converted to ATIF trajectories valid against Harbor's schema, with every tool call and its
 * result; a log the agent replaced by a link or a FIFO is not read.
 */
import { existsSync, readFileSync, symlinkSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { keepNativeLog } from '../../src/agents/installed/agent.ts';
import { INSTALLED_AGENT_NAMES } from '../../src/agents/installed/packages.ts';
import { trajectoryFromNativeLog } from '../../src/agents/installed/trajectory.ts';
import { trajectoryValidator } from '../helpers/atif.ts';
import { tempDirs } from '../helpers/temp-dirs.ts';

const temp = tempDirs();
afterAll(temp.cleanup);
const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'installed');
const instruction = 'Write greet.py, then run the command.';

describe('native logs to ATIF', () => {
  for (const agent of INSTALLED_AGENT_NAMES) {
    it(`${agent}: every tool call, its result and the final answer; valid ATIF`, () => {
      const log = readFileSync(join(FIXTURES, `${agent}.jsonl`), 'utf8');
      const trajectory = trajectoryFromNativeLog(log, {
        agent,
        version: '1.0.0',
        model: 'test-model',
        instruction,
      });
      if (!trajectory) throw new Error('no trajectory');
      expect(trajectoryValidator()(trajectory)).toEqual([]);
      expect(trajectory.steps[0]).toMatchObject({ source: 'user', message: instruction });
      const calls = trajectory.steps.flatMap((s) => s.tool_calls ?? []);
      expect(JSON.stringify(calls)).toContain('greet.py');
      expect(JSON.stringify(calls)).toContain('echo ran > ran.txt');
      // Each call has its result.
      for (const step of trajectory.steps.filter((s) => s.tool_calls?.length))
        expect(step.observation?.results.length).toBe(step.tool_calls?.length);
      expect(trajectory.steps.at(-1)?.message).toContain('Done');
      expect(trajectory.final_metrics?.total_steps).toBe(trajectory.steps.length);
      expect(trajectory.final_metrics?.total_prompt_tokens).toBeGreaterThan(0);
    });
  }

  it("the gateway's totals win over the log's own counts", () => {
    const log = readFileSync(join(FIXTURES, 'claude-code.jsonl'), 'utf8');
    const t = trajectoryFromNativeLog(log, {
      agent: 'claude-code',
      version: '1',
      instruction,
      usage: { inputTokens: 1234, cachedTokens: 5, outputTokens: 67, costUsd: 0.5 },
    });
    expect(t?.final_metrics).toMatchObject({
      total_prompt_tokens: 1234,
      total_cached_tokens: 5,
      total_completion_tokens: 67,
      total_cost_usd: 0.5,
    });
  });

  it('a log with no model turn (the CLI failed at start) gives no trajectory', () => {
    expect(
      trajectoryFromNativeLog('Error: no API key\n', { agent: 'codex', version: '1', instruction }),
    ).toBe(undefined);
  });
});

describe('a hostile agent and its log file', () => {
  it('a log replaced by a link to a host file, or by a FIFO, is not read', async () => {
    const secret = join(await temp.make('berth-host-'), 'secret.txt');
    await writeFile(
      secret,
      '{"type":"assistant","message":{"content":[{"type":"text","text":"HOST SECRET"}]}}\n',
    );
    const linked = await temp.make('berth-agent-log-');
    await mkdir(join(linked, 'command'));
    symlinkSync(secret, join(linked, 'command', 'stdout.txt'));
    const context = { agent: 'claude-code' as const, version: '1', instruction };
    expect(await keepNativeLog(linked, context)).toBeUndefined();
    expect(existsSync(join(linked, 'claude-code.txt'))).toBe(false);
    expect(existsSync(join(linked, 'trajectory.json'))).toBe(false);
    // A link in the folder's path is refused too.
    const viaDir = await temp.make('berth-agent-log-');
    symlinkSync(join(linked, 'command'), join(viaDir, 'command'));
    expect(await keepNativeLog(viaDir, context)).toBeUndefined();
    // A FIFO would block a plain read forever.
    const fifo = await temp.make('berth-agent-log-');
    await mkdir(join(fifo, 'command'));
    await execa('mkfifo', [join(fifo, 'command', 'stdout.txt')]);
    expect(await keepNativeLog(fifo, context)).toBeUndefined();
  });

  it('a real log is kept and converted', async () => {
    const dir = await temp.make('berth-agent-log-');
    await mkdir(join(dir, 'command'));
    await writeFile(join(dir, 'command', 'stdout.txt'), readFileSync(join(FIXTURES, 'codex.jsonl')));
    expect(await keepNativeLog(dir, { agent: 'codex', version: '0.171.0', instruction })).toBeGreaterThan(2);
    expect(readFileSync(join(dir, 'codex.txt'), 'utf8')).toContain('thread.started');
    expect(JSON.parse(readFileSync(join(dir, 'trajectory.json'), 'utf8')).schema_version).toBe('ATIF-v1.7');
  });
});
