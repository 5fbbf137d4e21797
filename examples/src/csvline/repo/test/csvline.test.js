import assert from 'node:assert/strict';
import test from 'node:test';
import { parseLine, stringify } from '../lib/csvline.js';

test('plain fields', () => {
  assert.deepEqual(parseLine('a,b,c'), ['a', 'b', 'c']);
});

test('empty line has no fields', () => {
  assert.deepEqual(parseLine(''), []);
});

test('empty fields are kept, including a trailing one', () => {
  assert.deepEqual(parseLine('a,,b,'), ['a', '', 'b', '']);
});

test('a simple quoted field loses its quotes', () => {
  assert.deepEqual(parseLine('"a",b'), ['a', 'b']);
});

test('another delimiter', () => {
  assert.deepEqual(parseLine('a;b;c', { delimiter: ';' }), ['a', 'b', 'c']);
});

test('stringify leaves plain fields alone', () => {
  assert.equal(stringify(['a', 'b', 1]), 'a,b,1');
});

test('stringify quotes delimiters, quotes and line breaks', () => {
  assert.equal(stringify(['a,b', 'say "hi"', 'two\nlines']), '"a,b","say ""hi""","two\nlines"');
});

test('stringify with another delimiter', () => {
  assert.equal(stringify(['a;b', 'c,d'], { delimiter: ';' }), '"a;b";c,d');
});
