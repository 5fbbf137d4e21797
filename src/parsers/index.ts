/**
 * Every parser berth knows, by registry name. Add a parser by writing
 * `<format>.ts` in this folder and listing it here.
 */
import { goTestParser } from './go-test.ts';
import { junitParser } from './junit.ts';
import { pytestParser } from './pytest.ts';
import { tapParser } from './tap.ts';
import type { Parser } from './types.ts';

export const parsers: Parser[] = [pytestParser, tapParser, junitParser, goTestParser];
