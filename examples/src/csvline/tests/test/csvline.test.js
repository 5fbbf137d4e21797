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

test('a quoted field may hold the delimiter', () => {
  assert.deepEqual(parseLine('a,"b,c",d'), ['a', 'b,c', 'd']);
});

test('a doubled quote inside a quoted field is one quote', () => {
  assert.deepEqual(parseLine('"say ""hi""",x'), ['say "hi"', 'x']);
});

test('a quoted empty field and a field that is only a quote', () => {
  assert.deepEqual(parseLine('"","""",z'), ['', '"', 'z']);
});

test('a quote inside an unquoted field is kept', () => {
  assert.deepEqual(parseLine('5" disk,ok'), ['5" disk', 'ok']);
});

test('parse inverts stringify', () => {
  const fields = ['a,b', 'say "hi"', 'two\nlines', '', 'plain', '"'];
  assert.deepEqual(parseLine(stringify(fields)), fields);
});

test('a quoted field with a multi-character delimiter', () => {
  assert.deepEqual(parseLine('"a::b"::c', { delimiter: '::' }), ['a::b', 'c']);
});

test('an unterminated quoted field names its column', () => {
  assert.throws(() => parseLine('ab,"cd'), {
    name: 'SyntaxError',
    message: 'unterminated quoted field at column 4',
  });
});

test('text after a closing quote names its column', () => {
  assert.throws(() => parseLine('"ab"c,d'), {
    name: 'SyntaxError',
    message: 'unexpected character after closing quote at column 5',
  });
});

test('stringify quotes a carriage return too', () => {
  assert.equal(stringify(['a\rb', 'c']), '"a\rb",c');
});
