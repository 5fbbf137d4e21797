/**
 * `berth generate`: completions from an OpenAI-compatible endpoint, post-processed
 * as JetBrains' Kotlin HumanEval evaluation does (its dataset card, jetbrains/Kotlin_HumanEval),
 * written as a samples file for `berth eval`.
 */
import { Option } from 'commander';
import { BerthError, UsageError } from '../../errors.ts';
import type { RegisterCommand } from './index.ts';

const collect = (value: string, previous: string[]) => [...previous, value];

/** Lets users type `\n` in sequences on the command line. */
function unescapeSequence(text: string): string {
  return text.replace(/\\(n|t|r|\\)/g, (_, c: string) => ({ n: '\n', t: '\t', r: '\r', '\\': '\\' })[c] ?? c);
}

function number(name: string, text: string, integer: boolean, min: number): number {
  const value = Number(text);
  if (!Number.isFinite(value) || value < min || (integer && !Number.isInteger(value))) {
    throw new UsageError(`${name}: expected ${integer ? 'an integer' : 'a number'} >= ${min}, got "${text}"`);
  }
  return value;
}

export const registerGenerate: RegisterCommand = (program) => {
  program
    .command('generate')
    .description(
      "Generate samples for function-level problems from a model (any -m berth run takes; completions from an OpenAI-compatible server), through berth's model gateway.",
    )
    .requiredOption('--problems <file>', 'problem file (human-eval / MXEval JSONL or JSON, gzip or plain)')
    .requiredOption(
      '-m, --model <name>',
      'PROVIDER/NAME as for berth run (openai/gpt-4o, anthropic/claude-sonnet-4-5, ...), or the name an OpenAI-compatible server at --model-base-url knows',
    )
    .option('--model-base-url <url>', 'base URL of the model API, e.g. http://127.0.0.1:8000/v1')
    .addOption(new Option('--base-url <url>', 'old name of --model-base-url').hideHelp())
    .option('--env-file <file>', 'dotenv file with model keys, read over the environment')
    .option('--chat', 'use /chat/completions (prompt as the user message) instead of /completions')
    .option('--system <text>', 'system message for --chat')
    .option('--num-samples <n>', 'samples per problem', '1')
    .option('--temperature <t>', 'sampling temperature', '0')
    .option('--top-p <p>', 'nucleus sampling')
    .option('--max-tokens <n>', 'tokens per answer', '256')
    .option(
      '--stop <seq>',
      'stop sequence sent to the endpoint (repeatable, up to 4; \\n allowed)',
      collect,
      [],
    )
    .option(
      '--stop-at <seq>',
      'post-processing: cut after this sequence, keeping it (repeatable; Kotlin HumanEval uses "\\n}\\n")',
      collect,
      [],
    )
    .option('--strip-comments', "post-processing: remove // and /* */ comments (Kotlin HumanEval's regexes)")
    .option(
      '--drop-signature',
      'post-processing: keep only the lines after the first signature line of prompt + answer',
    )
    .option('--signature-prefix <text>', 'line prefix of the signature for --drop-signature', 'fun ')
    .option('--extract-code', 'post-processing: keep the first fenced code block (chat models)')
    .option(
      '--kotlin-humaneval-postprocess',
      'the post-processing of JetBrains\' Kotlin HumanEval: --stop-at "\\n}\\n" --strip-comments --drop-signature',
    )
    // The option's first name, kept working for existing scripts.
    .addOption(new Option('--seed-postprocess', 'old name of --kotlin-humaneval-postprocess').hideHelp())
    .option('-n, --concurrency <n>', 'requests in flight', '4')
    .option('--request-timeout <seconds>', 'per-request timeout in seconds', '600')
    .option('-l, --limit <n>', 'only the first N problems')
    .option('--api-key <key>', "API key (default the provider's variable, e.g. $OPENAI_API_KEY)")
    .option('-o, --out <file>', 'samples file to write (default samples-<model>.jsonl)')
    .action(async (options) => {
      const { readProblems } = await import('../../functional/formats.ts');
      const { generate } = await import('../../functional/generate.ts');
      const { generateModel } = await import('../../models/generate-model.ts');
      const problems = await readProblems(options.problems);
      const stopAt = (options.stopAt as string[]).map(unescapeSequence);
      const kotlinHumanEval = Boolean(options.kotlinHumanevalPostprocess || options.seedPostprocess);
      if (kotlinHumanEval && stopAt.length === 0) stopAt.push('\n}\n');
      const out = options.out ?? `samples-${String(options.model).replace(/[^\w.-]+/g, '_')}.jsonl`;
      const baseUrl = options.modelBaseUrl ?? options.baseUrl;
      if (options.modelBaseUrl && options.baseUrl && options.modelBaseUrl !== options.baseUrl)
        throw new UsageError('--base-url is the old name of --model-base-url: give one of them');
      const requestTimeout = number('--request-timeout', options.requestTimeout, false, 1);
      const concurrency = number('--concurrency', options.concurrency, true, 1);
      // Every request goes through berth's model gateway (keys stay here; tokens and cost counted).
      const model = await generateModel({
        model: options.model,
        ...(baseUrl ? { baseUrl } : {}),
        ...(options.apiKey ? { apiKey: options.apiKey } : {}),
        ...(options.envFile ? { envFile: options.envFile } : {}),
        requestTimeoutSec: requestTimeout,
        concurrency,
      });
      let samples: Awaited<ReturnType<typeof generate>>;
      try {
        samples = await generate({
          problems,
          model: model.name,
          baseUrl: model.baseUrl,
          endpoint: baseUrl ?? options.model,
          apiKey: model.token,
          maxRetries: 0,
          chat: Boolean(options.chat),
          ...(options.system ? { system: options.system } : {}),
          numSamples: number('--num-samples', options.numSamples, true, 1),
          temperature: number('--temperature', options.temperature, false, 0),
          ...(options.topP !== undefined ? { topP: number('--top-p', options.topP, false, 0) } : {}),
          maxTokens: number('--max-tokens', options.maxTokens, true, 1),
          stop: (options.stop as string[]).map(unescapeSequence),
          concurrency,
          timeoutSec: requestTimeout,
          ...(options.limit !== undefined ? { limit: number('--limit', options.limit, true, 1) } : {}),
          postprocess: {
            stopAt,
            stripComments: Boolean(options.stripComments) || kotlinHumanEval,
            dropSignature: Boolean(options.dropSignature) || kotlinHumanEval,
            signaturePrefix: unescapeSequence(options.signaturePrefix),
            extractCode: Boolean(options.extractCode),
          },
          out,
          onSample: (done, total) => {
            if (process.stderr.isTTY && !process.env.CI)
              process.stderr.write(`\r${done}/${total} samples generated`);
          },
        });
      } catch (error) {
        // The model's refusal or failure is the run's outcome, not a berth bug: said in one line.
        const { APIError } = await import('openai');
        if (error instanceof APIError)
          throw new BerthError('BERTH_MODEL_ERROR', `the model call failed: ${error.message}`, {
            exitCode: 1,
          });
        throw error;
      } finally {
        process.stderr.write(`${await model.close()}\n`);
      }
      if (process.stderr.isTTY && !process.env.CI) process.stderr.write('\n');
      process.stdout.write(
        `wrote ${samples.length} samples for ${new Set(samples.map((s) => s.task_id)).size} problems to ${out}\n`,
      );
    });
};
