/**
 * Program text for Kotlin and Java samples, assembled as mxeval assembles it, plus the rewrites
 * the fast path needs to compile many samples in one compiler call.
 */

/** The JVM languages berth runs through this module. */
export type JvmLanguage = 'kotlin' | 'java';

/**
 * mxeval (`mxeval/execution.py`, every non-Python language): `prompt + completion + test`,
 * concatenated without any separator.
 */
export function assembleProgram(prompt: string, completion: string, test: string): string {
  return prompt + completion + test;
}

/** A program moved into its own package, so that many samples can share one compiler call. */
export interface PackagedProgram {
  /** Source text; line numbers are the same as in the original program. */
  source: string;
  /** The package its classes land in. */
  pkg: string;
}

/**
 * Puts a program into package `pkg` without changing any line number: the `package` clause is
 * written on the program's first line (after any Kotlin `@file:` annotations, which must come
 * first). A program that declares its own package gets it nested under `pkg`.
 */
export function packageProgram(language: JvmLanguage, program: string, pkg: string): PackagedProgram {
  const own = /^[ \t]*package[ \t]+([A-Za-z_][\w.]*)[ \t]*;?/m.exec(program);
  if (own && /^\s*(\/\/[^\n]*\n|\/\*[\s\S]*?\*\/|@file:[^\n]*\n|\s)*$/.test(program.slice(0, own.index))) {
    const nested = `${pkg}.${own[1]}`;
    const source = `${program.slice(0, own.index)}package ${nested}${language === 'java' ? ';' : ''}${program.slice(own.index + own[0].length)}`;
    return { source, pkg: nested };
  }
  if (language === 'kotlin') {
    // @file: annotations must precede the package clause: put it at the end of the last such line.
    const fileAnnotations = [...program.matchAll(/^[ \t]*@file:[^\n]*$/gm)];
    const last = fileAnnotations.at(-1);
    if (last && last.index !== undefined) {
      const end = last.index + last[0].length;
      return { source: `${program.slice(0, end)}; package ${pkg};${program.slice(end)}`, pkg };
    }
  }
  return { source: `package ${pkg}; ${program}`, pkg };
}

/** The class mxeval's command starts: Java tests declare `class Main`; kotlinc picks the file facade with `main`. */
export function mainClassName(language: JvmLanguage): string {
  return language === 'java' ? 'Main' : 'MainKt';
}

/** File name used inside a batch: gives the Kotlin file facade the name `MainKt`. */
export function sourceFileName(language: JvmLanguage): string {
  return language === 'java' ? 'main.java' : 'Main.kt';
}
