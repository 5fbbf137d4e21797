import { describe, expect, it } from 'vitest';
import { decodeTestList, parsePythonStringList, TestListError } from './test-list.ts';

describe('decodeTestList', () => {
  const ids = ['tests/test_a.py::test_x[a-b]', "test_quote (it's) tests.Foo", 'unicodé ✓'];

  it('takes a list, a JSON-encoded string and a Python repr string to the same ids', () => {
    expect(decodeTestList(ids)).toEqual(ids);
    expect(decodeTestList(JSON.stringify(ids))).toEqual(ids);
    // What Python's str(list) writes: single quotes, or double quotes when the text holds a single quote.
    const repr = `['tests/test_a.py::test_x[a-b]', "test_quote (it's) tests.Foo", 'unicod\\xe9 \\u2713']`;
    expect(decodeTestList(repr)).toEqual(ids);
  });

  it('reads an empty list in every encoding', () => {
    expect(decodeTestList([])).toEqual([]);
    expect(decodeTestList('[]')).toEqual([]);
    expect(decodeTestList('')).toEqual([]);
  });

  it('handles escapes and a trailing comma in repr strings', () => {
    expect(parsePythonStringList(`['a\\\\b', 'c\\'d', 'tab\\there',]`)).toEqual(['a\\b', "c'd", 'tab\there']);
  });

  it('rejects what is not a list of strings, saying where', () => {
    expect(() => decodeTestList(42)).toThrow(TestListError);
    expect(() => decodeTestList('[1, 2]')).toThrow(/element 0 is number/);
    expect(() => decodeTestList("['a', 'b'")).toThrow(/character/);
    expect(() => decodeTestList('not a list')).toThrow(/expected '\['/);
  });
});
