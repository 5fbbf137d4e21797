import assert from 'node:assert/strict';
import test from 'node:test';
import { formatLine } from '../src/format.js';
import { parseLine } from '../src/parse.js';

test('parseLine splits plain fields', () => {
  assert.deepEqual(parseLine('a,b,c'), ['a', 'b', 'c']);
});

test('parseLine keeps delimiters and doubled quotes inside quotes', () => {
  assert.deepEqual(parseLine('"a,b","say ""hi""",c'), ['a,b', 'say "hi"', 'c']);
});

test('parseLine of an empty line is one empty field', () => {
  assert.deepEqual(parseLine(''), ['']);
  assert.deepEqual(parseLine('a,'), ['a', '']);
});

test('parseLine rejects an unterminated quote', () => {
  assert.throws(() => parseLine('"abc'), SyntaxError);
});

test('parseLine inverts formatLine', () => {
  for (const fields of [['x'], ['', ''], ['a;b', 'c'], ['"', '""', ',', 'q"q,']]) {
    assert.deepEqual(parseLine(formatLine(fields)), fields);
    assert.deepEqual(parseLine(formatLine(fields, ';'), ';'), fields);
  }
});
