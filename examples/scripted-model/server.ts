/**
 * An offline model for trying `berth run -a deckhand` without a real one: an
 * OpenAI-compatible server on 127.0.0.1 (berth's test helper
 * test/helpers/scripted-model-server.ts, which also speaks Anthropic Messages,
 * OpenAI Responses and Gemini) that plays a "model" knowing each row's gold patch:
 * its first answer in a conversation is a `bash` tool call that applies the gold
 * patch of the row whose problem statement the prompt carries, its second a
 * `finish` call. Nothing it answers is a real model's work: it shows the loop,
 * the gateway's records (model-calls.jsonl, tokens, trajectory) and the grading.
 *
 *   npx tsx examples/scripted-model/server.ts [--port N] [--dataset FILE.jsonl]
 *
 * prints `scripted model: http://127.0.0.1:PORT/v1` and serves until stopped.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { type ScriptStep, startScriptedModelServer } from '../../test/helpers/scripted-model-server.ts';

const { values } = parseArgs({
  options: {
    port: { type: 'string', default: '0' },
    dataset: {
      type: 'string',
      default: fileURLToPath(new URL('../swe-dockerless.jsonl', import.meta.url)),
    },
  },
});

interface Row {
  instance_id: string;
  problem_statement: string;
  patch: string;
}
const rows: Row[] = readFileSync(values.dataset, 'utf8')
  .split('\n')
  .filter((line) => line.trim() !== '')
  .map((line) => JSON.parse(line) as Row);

const DELIMITER = 'BERTH_SCRIPTED_GOLD_PATCH';

const server = await startScriptedModelServer((request): ScriptStep => {
  const prompt = JSON.stringify(request.body);
  const messages = Array.isArray(request.body.messages) ? request.body.messages : [];
  const answered = messages.filter((m) => (m as { role?: string }).role === 'assistant').length;
  const row = rows.find((r) => prompt.includes(JSON.stringify(r.problem_statement).slice(1, -1)));
  if (!row) return { reply: { text: 'I do not know this task.' } };
  if (answered === 0)
    return {
      reply: {
        text: `Applying the known fix for ${row.instance_id}.`,
        toolCalls: [
          {
            name: 'bash',
            input: { command: `git apply --whitespace=nowarn - <<'${DELIMITER}'\n${row.patch}${DELIMITER}` },
          },
        ],
        finish: 'tool-calls',
      },
    };
  return {
    reply: {
      toolCalls: [{ name: 'finish', input: { summary: `applied the gold patch of ${row.instance_id}` } }],
      finish: 'tool-calls',
    },
  };
}, Number(values.port));

process.stdout.write(`scripted model: ${server.url}/v1\n`);
const stop = () => void server.close().then(() => process.exit(0));
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
