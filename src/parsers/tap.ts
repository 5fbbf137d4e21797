/**
 * TAP (Test Anything Protocol) 12, 13 and 14 as node:test, tape, node-tap and
 * Perl's Test::More print it: test points, `# SKIP` / `# TODO` directives,
 * YAML diagnostic blocks, `Bail out!`, streamed subtests (`# Subtest: name`
 * and an indented child stream) and buffered subtests (`ok 1 - name {` ... `}`).
 *
 * Ids: the test point's description (text after the number, a leading `- `
 * removed, up to the first unescaped `#`, `\#` and `\\` unescaped); a point
 * without a description is `#<number>` (its number, or its position when the
 * number is missing). A subtest's points are prefixed by the names of the
 * subtests that enclose them, joined by ` > `:
 * `outer > inner > leaf`. A subtest's name is the one it announces
 * (`# Subtest: name` or `ok N - name {`), else the description of the test
 * point that closes it.
 *
 * Status: `ok` -> PASSED, `not ok` -> FAILED, `# SKIP` -> SKIPPED (even on
 * `not ok`), `not ok # TODO` -> SKIPPED with `todo: true` (an expected failure
 * in TAP), `ok # TODO` -> PASSED with `todo: true`.
 *
 * Never throws on malformed streams: a plan that disagrees with the points, a
 * `Bail out!` (points after it are ignored, as TAP consumers do), lines that are
 * not TAP and an unterminated YAML block are warnings. A stream that stops
 * inside a subtest or YAML block, or with fewer points than a leading plan
 * promised (and no bail out), is flagged as truncated.
 */
import { readLineBatches, stripAnsi, TestCollector } from './common.ts';
import type { ParseOptions, ParseResult, Parser, TestCase, TestStatus } from './types.ts';

const TEST_POINT = /^(not ok|ok)\b\s*(?:(\d+)\b)?\s*(.*)$/;
const PLAN = /^1\.\.(\d+)\s*(?:#\s*(.*))?$/;
const SUBTEST_HEADER = /^#\s*Subtest(?::\s*(.*))?$/i;
const VERSION = /^TAP version \d+\s*$/i;
const BAIL_OUT = /^Bail out!\s*(.*)$/i;
const PRAGMA = /^pragma [+-]\w+/;

/** One open level of subtests (children at `depth`). */
interface Group {
  depth: number;
  name?: string;
  /** True for `ok N - name {` groups, closed by `}`. */
  braced: boolean;
  /** Results of an unnamed group, held until the point that closes it names it. */
  pending?: TestCase[];
  plan?: number;
  count: number;
}

interface Level {
  plan?: number;
  planLine?: number;
  count: number;
  seenNumbers: number;
}

/** Splits a test point's text into description and directive, honouring `\#` and `\\` escapes. */
export function splitDirective(text: string): {
  description: string;
  directive?: 'skip' | 'todo';
  reason?: string;
} {
  let description = '';
  let i = 0;
  for (; i < text.length; i++) {
    const c = text[i] as string;
    if (c === '\\' && (text[i + 1] === '#' || text[i + 1] === '\\')) {
      description += text[i + 1];
      i++;
    } else if (c === '#') break;
    else description += c;
  }
  description = description.trim().replace(/^-\s+/, '').replace(/^-$/, '').trim();
  if (i >= text.length) return { description };
  const after = text.slice(i + 1).trim();
  const m = /^(skip\S*|todo)(?:\s+(.*))?$/i.exec(after);
  if (!m) return { description };
  const directive = (m[1] as string).toLowerCase().startsWith('skip') ? 'skip' : 'todo';
  return m[2] ? { description, directive, reason: m[2].trim() } : { description, directive };
}

export const tapParser: Parser = {
  name: 'tap',
  aliases: ['tap13', 'tap14', 'node-test', 'tape'],
  description: 'TAP 12/13/14 (node:test, tape, node-tap, Test::More): directives, subtests, YAML, bail out',

  detect(head: string): number {
    const text = stripAnsi(head);
    if (/^TAP version 1[34]\s*$/im.test(text)) return 0.95;
    const points = text.match(/^\s*(?:not )?ok\b/gm)?.length ?? 0;
    if (/^1\.\.\d+/m.test(text) && points > 0) return 0.85;
    if (points >= 2) return 0.5;
    // A plan of 0 tests (`1..0`, `1..0 # SKIP reason`: a skipped-all stream) has no test point.
    if (/^1\.\.0[ \t]*(?:#.*)?$/m.test(text)) return 0.6;
    return 0;
  },

  async parse(chunks, options?: ParseOptions): Promise<ParseResult> {
    const collector = new TestCollector('tap', { keepElements: options?.keepElements });
    const groups: Group[] = [];
    const top: Level = { count: 0, seenNumbers: 0 };
    // `# Subtest: name` headers not yet bound to a group: [indent depth, name].
    let headers: Array<{ depth: number; name: string }> = [];
    let yamlIndent = -1;
    let yamlStart = 0;
    let yamlMessage: TestCase | undefined;
    let lastPoint: TestCase | undefined;
    let lastPointIndent = 0;
    let lastPointName = '';
    let bailedOut = false;
    let ignoredAfterBail = 0;
    let garbage = 0;
    const garbageExamples: string[] = [];
    let lineNo = 0;
    let topPlans = 0;

    const emit = (test: TestCase): void => {
      // Deepest unnamed group holds it until it has a name.
      for (let g = groups.length - 1; g >= 0; g--) {
        const group = groups[g] as Group;
        if (group.name === undefined) {
          group.pending ??= [];
          group.pending.push(test);
          return;
        }
      }
      collector.add(test);
    };

    const prefix = (depth: number): string => {
      const names: string[] = [];
      for (const group of groups) if (group.depth <= depth) names.push(group.name ?? '\u0000');
      return names.length > 0 ? `${names.join(' > ')} > ` : '';
    };

    const closeGroupsDeeperThan = (depth: number, closer?: string): void => {
      while (groups.length > 0 && (groups[groups.length - 1] as Group).depth > depth) {
        const group = groups.pop() as Group;
        if (group.name === undefined) group.name = (group.depth === depth + 1 ? closer : undefined) ?? '?';
        if (group.plan !== undefined && group.plan !== group.count) {
          collector.warn(`subtest "${group.name}" planned ${group.plan} test(s) but reported ${group.count}`);
        }
        if (group.pending) {
          // Unnamed until now: its children's ids get the name in place of the placeholder.
          for (const test of group.pending) {
            const at = test.id.lastIndexOf('\u0000');
            if (at !== -1) test.id = test.id.slice(0, at) + group.name + test.id.slice(at + 1);
            emit(test);
          }
        }
      }
    };

    const openGroupsTo = (depth: number): void => {
      let current = groups.length > 0 ? (groups[groups.length - 1] as Group).depth : 0;
      while (current < depth) {
        current++;
        const index = headers.findIndex((h) => h.depth <= current);
        let name: string | undefined;
        if (index !== -1) {
          name = (headers[index] as { name: string }).name;
          headers = headers.slice(index + 1);
        }
        groups.push({ depth: current, ...(name !== undefined ? { name } : {}), braced: false, count: 0 });
      }
    };

    for await (const batch of readLineBatches(chunks))
      for (const raw of batch) {
        lineNo++;
        let line = raw.includes('\u001b') ? stripAnsi(raw) : raw;
        line = line.replace(/\s+$/, '');

        // Inside a YAML diagnostic block: until `...` at its indent, or a line indented less.
        if (yamlIndent >= 0) {
          const indent = line.length - line.trimStart().length;
          if (line.trim() === '...' && indent >= yamlIndent) {
            yamlIndent = -1;
            continue;
          }
          if (line.trim() === '' || indent >= yamlIndent) {
            if (yamlMessage && !yamlMessage.message) {
              const m = /^\s*message:\s*(.+)$/.exec(line);
              if (m) yamlMessage.message = (m[1] as string).replace(/^["']|["']$/g, '');
            }
            continue;
          }
          collector.warn(`line ${yamlStart}: YAML block not closed by "..."`);
          yamlIndent = -1;
        }
        if (line.trim() === '') continue;

        const indent = line.length - line.trimStart().length;
        const depth = Math.floor(indent / 4);
        const body = line.trimStart();

        if (bailedOut) {
          if (TEST_POINT.test(body)) ignoredAfterBail++;
          continue;
        }

        const bail = BAIL_OUT.exec(body);
        if (bail) {
          bailedOut = true;
          collector.warn(`line ${lineNo}: Bail out!${bail[1] ? ` ${bail[1]}` : ''}`);
          continue;
        }

        if (body === '---' && lastPoint && indent > lastPointIndent) {
          yamlIndent = indent;
          yamlStart = lineNo;
          yamlMessage = lastPoint;
          continue;
        }

        if (body === '{' && lastPoint && lastPointIndent === indent) {
          // A buffered subtest whose `{` follows the point's YAML block.
          groups.push({ depth: depth + 1, name: lastPointName, braced: true, count: 0 });
          continue;
        }
        if (body === '}') {
          // Closes the braced group whose opening point sits at this depth.
          closeGroupsDeeperThan(depth);
          continue;
        }

        const tp = TEST_POINT.exec(body);
        if (tp) {
          let text = tp[3] as string;
          const braced = /\s*\{$/.test(text) && !/\\\{$/.test(text);
          if (braced) text = text.replace(/\s*\{$/, '');
          const { description, directive, reason } = splitDirective(text);
          // A point at depth d ends every subtest deeper than d; an unnamed one takes its description.
          closeGroupsDeeperThan(depth, description || undefined);
          headers = headers.filter((h) => h.depth < depth);
          openGroupsTo(depth);
          const level: Level | Group = depth === 0 ? top : (groups[groups.length - 1] as Group);
          level.count++;
          const number = tp[2] !== undefined ? Number(tp[2]) : level.count;
          const name = description || `#${number}`;
          const ok = tp[1] === 'ok';
          let status: TestStatus = ok ? 'PASSED' : 'FAILED';
          if (directive === 'skip') status = 'SKIPPED';
          else if (directive === 'todo' && !ok) status = 'SKIPPED';
          const test: TestCase = { id: prefix(depth) + name, status, line: lineNo };
          if (directive === 'todo') test.todo = true;
          if (reason) test.message = reason;
          emit(test);
          lastPoint = test;
          lastPointIndent = indent;
          lastPointName = name;
          if (braced) {
            groups.push({ depth: depth + 1, name, braced: true, count: 0 });
          }
          continue;
        }

        const plan = PLAN.exec(body);
        if (plan) {
          const n = Number(plan[1]);
          if (depth === 0 && groups.length === 0) {
            topPlans++;
            if (topPlans > 1) collector.warn(`line ${lineNo}: more than one plan (1..${n})`);
            else {
              top.plan = n;
              top.planLine = lineNo;
              if (n === 0 && plan[2]) collector.warn(`skip all: ${plan[2]}`);
            }
          } else {
            openGroupsTo(depth);
            const group = groups.find((g) => g.depth === depth) ?? groups[groups.length - 1];
            if (group) group.plan = n;
          }
          continue;
        }

        const header = SUBTEST_HEADER.exec(body);
        if (header) {
          headers.push({ depth, name: (header[1] ?? '').trim() });
          continue;
        }
        if (body.startsWith('#') || VERSION.test(body) || PRAGMA.test(body)) continue;

        garbage++;
        if (garbageExamples.length < 3)
          garbageExamples.push(`line ${lineNo}: ${JSON.stringify(body.slice(0, 80))}`);
      }

    if (yamlIndent >= 0) {
      collector.truncated = true;
      collector.warn(`line ${yamlStart}: YAML block not closed by "..." at end of input`);
    }
    if (!bailedOut && groups.length > 0) {
      collector.truncated = true;
      collector.warn(`input ended inside ${groups.length} unfinished subtest(s)`);
    }
    closeGroupsDeeperThan(-1);
    if (ignoredAfterBail > 0) collector.warn(`${ignoredAfterBail} test point(s) after Bail out! ignored`);
    if (garbage > 0)
      collector.warn(`${garbage} line(s) that are not TAP ignored (${garbageExamples.join('; ')})`);
    if (top.plan !== undefined && top.plan !== top.count && !bailedOut) {
      collector.warn(`plan 1..${top.plan} (line ${top.planLine}) but ${top.count} test point(s) reported`);
      if (top.count < top.plan && top.planLine !== undefined && top.planLine < lineNo && top.count > 0) {
        // A leading plan promised more than arrived: the stream may have been cut.
        const leading = top.planLine <= 3;
        if (leading) collector.truncated = true;
      }
    } else if (top.plan === undefined && top.count > 0 && !bailedOut) {
      collector.warn('no plan (1..N) in the stream');
    }
    return collector.result();
  },
};
