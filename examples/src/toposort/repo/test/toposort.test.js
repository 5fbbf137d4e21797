import assert from 'node:assert/strict';
import test from 'node:test';
import { levels, toposort } from '../src/index.js';

test('empty graph gives an empty order', () => {
  assert.deepEqual(toposort({}), []);
});

test('a chain is ordered dependencies first', () => {
  assert.deepEqual(toposort({ c: ['b'], b: ['a'] }), ['a', 'b', 'c']);
});

test('a diamond keeps first-appearance order for ties', () => {
  assert.deepEqual(toposort({ app: ['lib', 'util'], lib: ['base'], util: ['base'] }), [
    'base',
    'lib',
    'util',
    'app',
  ]);
});

test('nodes that are only dependencies are included', () => {
  assert.deepEqual(toposort({ a: ['x', 'y'] }), ['x', 'y', 'a']);
});

test('independent nodes keep key order', () => {
  assert.deepEqual(toposort({ b: [], a: [], c: [] }), ['b', 'a', 'c']);
});

test('levels of a flat graph is one level', () => {
  assert.deepEqual(levels({ a: [], b: [] }), [['a', 'b']]);
});

test('levels of a single dependency', () => {
  assert.deepEqual(levels({ b: ['a'] }), [['a'], ['b']]);
});
