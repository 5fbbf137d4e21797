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

test('levels use the deepest dependency, not the number of dependencies', () => {
  assert.deepEqual(levels({ app: ['lib'], lib: ['util'], cli: ['util'] }), [['util'], ['lib', 'cli'], ['app']]);
});

test('levels with a long and a short path to the same node', () => {
  assert.deepEqual(levels({ top: ['a', 'd'], a: ['b'], b: ['c'], d: [] }), [['c', 'd'], ['b'], ['a'], ['top']]);
});

test('a two-node cycle throws CycleError naming the cycle', () => {
  assert.throws(() => toposort({ a: ['b'], b: ['a'] }), {
    name: 'CycleError',
    message: 'cycle: a -> b -> a',
    cycle: ['a', 'b', 'a'],
  });
});

test('a self-dependency is a cycle', () => {
  assert.throws(() => toposort({ a: ['a'] }), { name: 'CycleError', message: 'cycle: a -> a' });
});

test('the reported cycle starts where it closes, not at the first key', () => {
  assert.throws(() => toposort({ app: ['x'], x: ['y'], y: ['z'], z: ['x'] }), {
    message: 'cycle: x -> y -> z -> x',
    cycle: ['x', 'y', 'z', 'x'],
  });
});

test('levels refuse a cyclic graph', () => {
  assert.throws(() => levels({ a: ['b'], b: ['c'], c: ['a'] }), { name: 'CycleError' });
});

test('a shared dependency is not mistaken for a cycle', () => {
  assert.deepEqual(toposort({ a: ['c'], b: ['c'], c: [] }), ['c', 'a', 'b']);
});

test('levels of a chain', () => {
  assert.deepEqual(levels({ c: ['b'], b: ['a'] }), [['a'], ['b'], ['c']]);
});
