import assert from 'node:assert/strict';
import test from 'node:test';
import { compare, sort } from '../src/compare.js';

test('equal versions compare as 0', () => {
  assert.equal(compare('1.2.3', '1.2.3'), 0);
});

test('major version decides first', () => {
  assert.equal(compare('2.0.0', '1.9.9'), 1);
});

test('a pre-release sorts before its release', () => {
  assert.equal(compare('1.0.0-rc.1', '1.0.0'), -1);
  assert.equal(compare('1.0.0', '1.0.0-rc.1'), 1);
});

test('sort orders single-digit versions', () => {
  assert.deepEqual(sort(['1.2.0', '1.0.0', '1.1.0']), ['1.0.0', '1.1.0', '1.2.0']);
});

test('numeric parts compare as numbers', () => {
  assert.equal(compare('1.10.0', '1.9.0'), 1);
  assert.equal(compare('0.0.9', '0.0.10'), -1);
});

test('numeric pre-release identifiers compare as numbers', () => {
  assert.equal(compare('1.0.0-rc.2', '1.0.0-rc.10'), -1);
});

test('sort orders multi-digit versions', () => {
  assert.deepEqual(sort(['1.10.0', '1.2.0', '1.9.1']), ['1.2.0', '1.9.1', '1.10.0']);
});
