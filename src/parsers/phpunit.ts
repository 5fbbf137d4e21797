/**
 * PHPUnit `--testdox` console output (PHPUnit 9 and 10+).
 *
 * Ids: `<suite title> > <test sentence>`, SWE-bench's rule
 * (`parse_log_phpunit`): `Calculator > Adds two numbers`,
 * `Calculator > Adds pairs with data set "small"`. The suite title is the
 * header line (PHPUnit 10 appends the class in parentheses, kept in `class`).
 * `✔` passed, `✘` failed (testdox does not tell errors from failures), `↩`
 * skipped, `∅` incomplete (SKIPPED), `☢` risky and `⚠` warning (PASSED with
 * `outcome`). The plain-text testdox form `[x]` / `[ ]` is read too. The
 * "Summary of non-successful tests" section repeats results and is skipped.
 */
import { readLineBatches, stripAnsi, TestCollector } from './common.ts';
import type { ParseOptions, ParseResult, Parser, TestCase, TestStatus } from './types.ts';

const SYMBOLS: Record<string, { status: TestStatus; outcome?: string }> = {
  '✔': { status: 'PASSED' },
  '✘': { status: 'FAILED' },
  '↩': { status: 'SKIPPED' },
  '∅': { status: 'SKIPPED', outcome: 'incomplete' },
  '☢': { status: 'PASSED', outcome: 'risky' },
  '⚠': { status: 'PASSED', outcome: 'warning' },
};

export const phpunitParser: Parser = {
  name: 'phpunit',
  aliases: ['phpunit-testdox', 'testdox'],
  description: 'PHPUnit --testdox console output',
  detect(head: string): number {
    const text = stripAnsi(head);
    if (/^PHPUnit \d+\.\d+/m.test(text) && /^ [✔✘↩∅☢⚠] /m.test(text)) return 0.95;
    if (/^PHPUnit \d+\.\d+/m.test(text)) return 0.6;
    if (/^ [✔✘↩] \S/m.test(text)) return 0.5;
    return 0;
  },
  async parse(chunks, options?: ParseOptions): Promise<ParseResult> {
    const collector = new TestCollector('phpunit', { keepElements: options?.keepElements });
    let suite: string | undefined;
    let suiteClass: string | undefined;
    let inSummary = false;
    let lineNo = 0;
    let footer: string | undefined;
    for await (const batch of readLineBatches(chunks)) {
      for (const raw of batch) {
        lineNo++;
        const line = (raw.includes('\u001b') ? stripAnsi(raw) : raw).trimEnd();
        if (line === '') continue;
        if (/^Summary of non-successful tests:?$/.test(line)) {
          inSummary = true;
          continue;
        }
        if (/^(OK|Tests:|ERRORS!|FAILURES!|OK, but)/.test(line)) {
          footer = line;
          inSummary = false;
          continue;
        }
        if (inSummary) continue;
        if (/^PHPUnit \d|^Runtime:|^Configuration:|^Time: |^Random Seed:|^There (was|were) \d/.test(line))
          continue;
        const m = /^ ([✔✘↩∅☢⚠]) (.+)$/.exec(line);
        const plain = m ? null : /^ \[([x ])\] (.+)$/.exec(line);
        if ((m || plain) && suite !== undefined) {
          const { status, outcome } = m
            ? (SYMBOLS[m[1] as string] as { status: TestStatus; outcome?: string })
            : { status: (plain?.[1] === 'x' ? 'PASSED' : 'FAILED') as TestStatus, outcome: undefined };
          const rawSentence = (m ? m[2] : plain ? plain[2] : '') as string;
          const sentence = rawSentence.replace(/\s+\d+(?:\.\d+)? ms$/, '');
          const test: TestCase = { id: `${suite} > ${sentence}`, status, line: lineNo };
          if (outcome) test.outcome = outcome;
          if (suiteClass) test.class = suiteClass;
          collector.add(test);
          continue;
        }
        if (/^\S/.test(line)) {
          const header = /^(.+?) \(([\w\\]+)\)$/.exec(line);
          suite = header ? header[1] : line;
          suiteClass = header ? header[2] : undefined;
        }
      }
    }
    if (footer === undefined && collector.size > 0) {
      collector.truncated = true;
      collector.warn('no PHPUnit result footer (OK / Tests: ...): the log looks cut short');
    } else if (footer) {
      const total = /Tests: (\d+)/.exec(footer) ?? /OK \((\d+) tests?/.exec(footer);
      if (total && Number(total[1]) !== collector.size) {
        collector.warn(`PHPUnit reports ${total[1]} test(s) but ${collector.size} were parsed`);
      }
    }
    return collector.result();
  },
};
