import assert from 'node:assert/strict';
import test from 'node:test';
import { formatLine } from '../src/format.js';

test('plain fields are joined', () => {
  assert.equal(formatLine(['a', 'b', 'c']), 'a,b,c');
});

test('fields with the delimiter are quoted', () => {
  assert.equal(formatLine(['a,b', 'c']), '"a,b",c');
});

test('quotes are doubled', () => {
  assert.equal(formatLine(['say "hi"']), '"say ""hi"""');
});
