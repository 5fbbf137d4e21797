/**
 * A deliberately tiny parser used only by tests of the trial engine: it reads
 * lines `RESULT <PASSED|FAILED|ERROR|SKIPPED> <id>` so tests can drive the
 * verifier with shell commands, independent of the real parsers.
 */
import { readLines, TestCollector } from '../../src/parsers/common.ts';
import type { Parser } from '../../src/parsers/types.ts';

export const statusLinesParser: Parser = {
  name: 'status-lines',
  description: 'test helper: RESULT <STATUS> <id> lines',
  detect: (head) => (/^RESULT (PASSED|FAILED|ERROR|SKIPPED) /m.test(head) ? 0.9 : 0),
  async parse(chunks) {
    const collector = new TestCollector('status-lines');
    for await (const line of readLines(chunks)) {
      const m = line.match(/^RESULT (PASSED|FAILED|ERROR|SKIPPED) (.+)$/);
      if (m) collector.add({ id: m[2] as string, status: m[1] as 'PASSED' });
    }
    return collector.result();
  },
};
