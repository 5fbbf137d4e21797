/**
 * Every parser berth knows, by registry name. Add a parser by writing
 * `<format>.ts` in this folder and listing it here.
 */
import { cargoParser } from './cargo.ts';
import { djangoParser } from './django.ts';
import { goTestParser } from './go-test.ts';
import { gradleParser } from './gradle.ts';
import { ctestParser, googletestParser } from './gtest.ts';
import { jestParser, vitestParser } from './jest.ts';
import { junitParser } from './junit.ts';
import { mavenParser } from './maven.ts';
import { minitestParser, testUnitParser } from './minitest.ts';
import { mochaParser } from './mocha.ts';
import { phpunitParser } from './phpunit.ts';
import { pytestParser } from './pytest.ts';
import { rspecParser } from './rspec.ts';
import { swiftTestParser } from './swift.ts';
import { sympyParser } from './sympy.ts';
import { tapParser } from './tap.ts';
import type { Parser } from './types.ts';

export const parsers: Parser[] = [
  pytestParser,
  tapParser,
  junitParser,
  goTestParser,
  cargoParser,
  jestParser,
  vitestParser,
  mochaParser,
  phpunitParser,
  rspecParser,
  minitestParser,
  testUnitParser,
  googletestParser,
  ctestParser,
  swiftTestParser,
  gradleParser,
  mavenParser,
  djangoParser,
  sympyParser,
];
