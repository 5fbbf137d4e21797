import { readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadPredictions, PredictionsAgent } from '../../src/agents/predictions.ts';
import { agentNames, createAgent } from '../../src/agents/registry.ts';
import { InputError, UsageError } from '../../src/errors.ts';
import { loadSwebench } from '../../src/tasks/swebench/load.ts';
import { fixturesDir } from '../helpers/data.ts';
import { tempDirs } from '../helpers/temp-dirs.ts';

const examplesDir = join(fixturesDir, '..', '..', 'examples');
const temp = tempDirs();
afterAll(temp.cleanup);

async function file(name: string, content: string): Promise<string> {
  const path = join(await temp.make('berth-preds-'), name);
  await writeFile(path, content);
  return path;
}

const p = (id: string, patch: string | null, model = 'm') => ({
  instance_id: id,
  model_name_or_path: model,
  model_patch: patch,
});

describe('predictions files', () => {
  it('reads JSONL, a JSON list and a JSON object keyed by instance_id alike', async () => {
    const rows = [p('a__a-1', 'diff'), p('b__b-1', null)];
    const jsonl = await file('p.jsonl', rows.map((r) => JSON.stringify(r)).join('\n'));
    const list = await file('p.json', JSON.stringify(rows));
    const keyed = await file('k.json', JSON.stringify({ 'a__a-1': rows[0], 'b__b-1': rows[1] }));
    for (const path of [jsonl, list, keyed]) {
      const predictions = await loadPredictions(path);
      expect([...predictions.keys()]).toEqual(['a__a-1', 'b__b-1']);
      expect(predictions.get('b__b-1')).toMatchObject({ patch: '', patchIsNone: true, modelName: 'm' });
    }
  });

  it('rejects bad files naming file, line and field', async () => {
    const cases: [string, string, { line: number; field: string }][] = [
      ['bad-json.jsonl', `${JSON.stringify(p('a', 'x'))}\n{oops\n`, { line: 2, field: '' }],
      [
        'no-patch.jsonl',
        JSON.stringify({ instance_id: 'a', model_name_or_path: 'm' }),
        { line: 1, field: 'model_patch' },
      ],
      ['no-id.jsonl', JSON.stringify({ model_patch: 'x' }), { line: 1, field: 'instance_id' }],
      ['bad-patch.jsonl', JSON.stringify(p('a', 5 as never)), { line: 1, field: 'model_patch' }],
      [
        'dup.jsonl',
        `${JSON.stringify(p('a', 'x'))}\n${JSON.stringify(p('a', 'y'))}`,
        { line: 2, field: 'instance_id' },
      ],
    ];
    for (const [name, content, where] of cases) {
      const path = await file(name, content);
      const error = await loadPredictions(path).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InputError);
      expect((error as InputError).location.file).toBe(path);
      expect((error as InputError).location.line).toBe(where.line);
      if (where.field) expect((error as InputError).location.field).toBe(where.field);
    }
  });

  it('lists every bad line of the bundled cross control, broken four ways, in line order', async () => {
    const lines = (await readFile(join(examplesDir, 'predictions', 'cross.jsonl'), 'utf8'))
      .trim()
      .split('\n');
    const rows = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    const { instance_id: _, ...noId } = rows[1] as Record<string, unknown>;
    const broken = [
      JSON.stringify({ ...rows[0], model_patch: 7, model_name_or_path: ['x'] }),
      JSON.stringify(noId),
      '[1, 2',
      lines[2],
      lines[3],
      lines[2],
    ];
    const path = await file('broken.jsonl', `${broken.join('\n')}\n`);
    const error = (await loadPredictions(path).catch((e: unknown) => e)) as InputError;
    expect(error).toBeInstanceOf(InputError);
    expect(error.issues.map((issue) => [issue.line, issue.field])).toEqual([
      [1, 'model_patch'],
      [1, 'model_name_or_path'],
      [2, 'instance_id'],
      [3, undefined],
      [6, 'instance_id'],
    ]);
    expect(error.message.split('\n')[0]).toBe(`${path}: 5 problems:`);
    expect(error.issues[4]?.message).toBe(
      `duplicate prediction for ${JSON.stringify(rows[2]?.instance_id)} (first at line 4)`,
    );
  });

  it('replays the prediction of each task and knows which tasks it covers', async () => {
    const tasks = await loadSwebench(join(fixturesDir, 'swebench', 'mini.jsonl'));
    const agent = new PredictionsAgent(
      await loadPredictions(await file('p.jsonl', JSON.stringify(p('mini__stats-1', 'PATCH', 'gpt-x')))),
    );
    expect(agent.info.modelName).toBe('gpt-x');
    expect(tasks.map((t) => agent.covers(t))).toEqual([true, false]);
    expect(agent.plannedPatch(tasks[0] as never)).toBe('PATCH');
    const result = await agent.run({
      task: tasks[0] as never,
      environment: {} as never,
      attempt: 1,
      logDir: tmpdir(),
    });
    expect(result).toMatchObject({ patch: 'PATCH', modelName: 'gpt-x' });
    expect(agent.unknownIds(tasks)).toEqual([]);
  });
});

describe('agent registry', () => {
  it('creates oracle and nop, and names the known agents for an unknown one', async () => {
    expect(agentNames()).toEqual(expect.arrayContaining(['nop', 'oracle', 'predictions']));
    expect((await createAgent('nop')).info.name).toBe('nop');
    const error = await createAgent('gpt-5').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UsageError);
    expect((error as Error).message).toMatch(
      /unknown agent "gpt-5"; known agents: .*nop.*oracle.*predictions/,
    );
    await expect(createAgent('predictions')).rejects.toThrow(/needs --predictions FILE/);
  });
});
