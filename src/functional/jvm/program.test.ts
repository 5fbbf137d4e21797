import { describe, expect, it } from 'vitest';
import { assembleProgram, packageProgram } from './program.ts';

describe('assembleProgram', () => {
  it('concatenates prompt, completion and test without a separator, as mxeval', () => {
    expect(assembleProgram('fun f(): Int {\n', '    return 1\n}', '\nfun main() {}\n')).toBe(
      'fun f(): Int {\n    return 1\n}\nfun main() {}\n',
    );
  });
});

describe('packageProgram', () => {
  const kotlin = '/**\n * doc\n */\nfun f(): Int {\n    return 1\n}\nfun main() { f() }\n';

  it('adds the package on the first line so line numbers do not move', () => {
    const p = packageProgram('kotlin', kotlin, 's7');
    expect(p.pkg).toBe('s7');
    expect(p.source.split('\n')).toHaveLength(kotlin.split('\n').length);
    expect(p.source.split('\n')[3]).toBe('fun f(): Int {');
    expect(p.source.startsWith('package s7; /**')).toBe(true);
  });

  it('puts a Kotlin package after @file annotations', () => {
    const p = packageProgram('kotlin', '@file:JvmName("X")\nfun main() {}\n', 's1');
    expect(p.source).toBe('@file:JvmName("X"); package s1;\nfun main() {}\n');
  });

  it('nests a program that declares its own package', () => {
    const p = packageProgram('java', 'package a.b;\nclass Main {}\n', 's2');
    expect(p).toEqual({ source: 'package s2.a.b;\nclass Main {}\n', pkg: 's2.a.b' });
  });

  it('leaves a package clause that is not at the top alone (the compiler rejects it, as it would unchanged)', () => {
    const java = 'import java.util.*;\nclass A {}\npackage x;\n';
    expect(packageProgram('java', java, 's3').source).toBe(`package s3; ${java}`);
  });
});
