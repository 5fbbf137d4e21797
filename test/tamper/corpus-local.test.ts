/** The tamper corpus on the local target (test/tamper/corpus.ts; the other target has its own file). */
import { corpusSuite } from './corpus.ts';

await corpusSuite('local');
