/**
 * Class-data archives (AppCDS, JDK 13+ dynamic archives) for the fast path's JVMs: the classes a
 * compiler JVM or a runner JVM loads, parsed and verified once and mapped at every start instead
 * of loaded again. Each archive is made once per (helper, JDK, Kotlin distribution) by a training
 * JVM that berth starts on a program of its own (never on a sample: a sample's JVM must not be
 * able to write what the next sample's JVM maps), and kept beside the helper
 * (`$BERTH_CACHE_DIR/jvm-helper/<hash>/cds-<key>-{compile,run}.jsa`, `berth clean --cache`).
 *
 * An archive that cannot be made (an older JDK, no `jar`) is no error: the JVMs start without one.
 * An archive that no longer matches its jars is ignored by the JVM itself (`-Xshare:auto`).
 */
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, realpathSync } from 'node:fs';
import { mkdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ownedTempDir } from '../../util/leftovers.ts';
import type { HelperBuild } from './helper.ts';
import { HELPER_CLASS } from './helper-source.ts';
import type { JdkInfo, KotlinInfo } from './toolchain.ts';

/** Paths of the archives, where they could be made. */
export interface JvmArchives {
  compile?: string;
  run?: string;
}

/**
 * Options of every compiler JVM (trusted: it compiles, never runs sample code). C1 only: the
 * compiler's run is too short for C2 to pay back what it costs (on MBKP, C2's compilations took
 * more CPU time than the Kotlin compiler itself). `kotlin.environment.keepalive` (the Kotlin
 * daemon's setting) keeps the compiler's application environment (its jar file system, core
 * services) from one call to the next instead of building it again for every call: a warm call of
 * 100 MBKP files about 15% less CPU (bench/compiler-calls.ts, 4 interleaved pairs at load 12-19).
 */
export const COMPILER_JVM_OPTIONS = [
  '-Xmx1g',
  '-Xss4m',
  '-XX:+UseSerialGC',
  '-XX:TieredStopAtLevel=1',
  '-Dkotlin.environment.keepalive=true',
];

/**
 * Options of every runner JVM (one per sample): C1 only, no perf-data file, and compile thresholds
 * ten times the default (`-XX:CompileThresholdScaling=10`: a method is compiled after 2,000 calls
 * instead of 200, a loop after 600,000 back-edges). A sample's `main` usually runs a few
 * milliseconds, so most of what C1 compiled at start-up was the JDK's and the helper's own start-up
 * code, run a few hundred times and never again: measured on one MBKP sample's runner (2-core
 * machine at load 16, 14 runs each, `perf stat -e task-clock`), 303 ms of CPU by default, 254 ms
 * with scaling 10, 239 ms interpreted only (`-Xint`, not taken: a sample that computes for seconds
 * would run many times slower). C2 would only add compiler threads.
 */
export const RUNNER_JVM_OPTIONS = [
  '-XX:+UseSerialGC',
  '-XX:TieredStopAtLevel=1',
  '-XX:CompileThresholdScaling=10',
  '-XX:-UsePerfData',
];

/** The options that map an archive (none when there is none); CDS's own messages silenced. */
export function archiveOptions(archive: string | undefined): string[] {
  return archive ? [`-XX:SharedArchiveFile=${archive}`, '-Xshare:auto', '-Xlog:cds=off,cds+dynamic=off'] : [];
}

/** The class path of a runner JVM: the helper and, for Kotlin, the standard library. */
export function runnerClasspath(helper: HelperBuild, kotlin: KotlinInfo | undefined): string {
  return [helper.jar, ...(kotlin ? [kotlin.stdlib] : [])].join(':');
}

/** The classes a runner checks it can load before it says READY (a broken toolchain is the run's error). */
export function runnerPreload(kotlin: KotlinInfo | undefined): string[] {
  return kotlin ? ['kotlin.Unit', 'kotlin.collections.CollectionsKt'] : [];
}

/**
 * The training programs: what MBKP/MBJP samples commonly use (collections, strings, regexes,
 * maths, exceptions), one that passes and one that fails (a test's exception), and one that does
 * not compile (the compiler's error path).
 */
const TRAIN: Record<'kotlin' | 'java', { file: string; pass: string; fail: string; bad: string }> = {
  kotlin: {
    file: 'Main.kt',
    pass: `package train
import kotlin.math.*
data class P(val a: Int, val b: String)
fun square(xs: List<Int>): List<Int> = xs.map { it * it }.filter { it >= 0 }.sorted()
fun main() {
    val m = mutableMapOf<String, Int>()
    for (w in "a b a c".split(" ")) m[w] = (m[w] ?: 0) + 1
    val h = HashMap<Int, MutableList<String>>()
    h.getOrPut(1) { mutableListOf() }.add("x")
    val s = StringBuilder().append(square(listOf(3, 1, 2))).append(m).append(arrayOf(1, 2).joinToString()).toString()
    val r = Regex("[a-z]+").findAll("ab 12 cd").map { it.value }.toList()
    val q = (1..10 step 2).toList().reversed() + IntArray(3) { it }.toList() + arrayListOf(1).sum()
    val t = listOf(P(2, "b"), P(1, "a")).sortedBy { it.a }.groupBy { it.b }.mapValues { it.value.size }
    val d = sqrt(2.0) + abs(-1) + max(1, 2) + 2.0.pow(3) + "12".toInt() + "1.5".toDouble() + (7 % 3) / 2.0
    val c = "Hello 1".toCharArray().filter { it.isUpperCase() || it.isDigit() }.joinToString("")
    val set = setOf(1, 2).union(mutableSetOf(3)).toSortedSet()
    val pair = Pair(1, "a") to Triple(1, 2, 3)
    try { listOf<Int>()[1] } catch (e: IndexOutOfBoundsException) { }
    val u = s.substring(1).uppercase().lowercase().trim().reversed().replace("a", "b")
    if (s.isEmpty() || "x".repeat(2) != "xx" || listOf(1, 2).maxOrNull() != 2) throw Exception("training failed")
    println("$s $r $q $t $d $c $set $pair $u")
}
`,
    fail: `package trainfail
fun main() {
    val x = listOf(1, 2, 3).sum()
    if (x != 7) throw Exception("Exception -- test case 0 did not pass. x0 = " + x)
}
`,
    bad: `package trainbad
fun f(): Double { return 1 }
fun main() { println(undefinedName) }
`,
  },
  java: {
    file: 'Main.java',
    pass: `package train;
import java.util.*;
public class Main {
  public static void main(String[] args) {
    List<Integer> l = new ArrayList<>(Arrays.asList(3, 1, 2));
    Collections.sort(l);
    Map<String, Integer> m = new HashMap<>();
    m.put("a", Math.max(1, 2));
    System.out.println(l + " " + m + " " + String.format("%d", l.size()) + " " + "Ab".toLowerCase());
  }
}
`,
    fail: `package trainfail;
public class Main {
  public static void main(String[] args) throws Exception {
    if (args.length == 0) throw new Exception("Exception -- test case 0 did not pass.");
  }
}
`,
    bad: `package trainbad;
public class Main { public static void main(String[] args) { int x = "no"; } }
`,
  },
};

const run = (file: string, args: string[], input: string, cwd: string, timeoutMs: number) =>
  new Promise<void>((resolve, reject) => {
    const child = execFile(file, args, { cwd, timeout: timeoutMs }, (err) => (err ? reject(err) : resolve()));
    child.stdin?.end(input);
  });

const made = new Map<string, Promise<JvmArchives>>();

/**
 * Returns the compiler and runner archives for this helper, JDK and Kotlin distribution, making
 * them the first time (about 10 CPU-seconds, once).
 */
export function ensureArchives(
  jdk: JdkInfo,
  kotlin: KotlinInfo | undefined,
  helper: HelperBuild,
): Promise<JvmArchives> {
  if (process.env.BERTH_JVM_CDS === '0' || jdk.major < 13) return Promise.resolve({});
  const real = (p: string) => {
    try {
      return realpathSync(p);
    } catch {
      return p;
    }
  };
  const inputs = `${real(jdk.java)}\0${jdk.versionLine}\0${kotlin ? real(kotlin.home) : '-'}\0${kotlin?.version ?? '-'}`;
  if (process.env.BERTH_JVM_DEBUG)
    console.error(`[berth jvm] class-data archives for ${JSON.stringify(inputs)}`);
  const key = createHash('sha256')
    .update(inputs)
    .update(`${COMPILER_JVM_OPTIONS.join(' ')}\0${RUNNER_JVM_OPTIONS.join(' ')}`)
    .update(JSON.stringify(TRAIN))
    .digest('hex')
    .slice(0, 16);
  let p = made.get(key);
  if (!p) {
    p = makeArchives(jdk, kotlin, helper, key).catch(() => ({}));
    made.set(key, p);
  }
  return p;
}

async function makeArchives(
  jdk: JdkInfo,
  kotlin: KotlinInfo | undefined,
  helper: HelperBuild,
  key: string,
): Promise<JvmArchives> {
  const compile = join(helper.dir, `cds-${key}-compile.jsa`);
  const runArchive = join(helper.dir, `cds-${key}-run.jsa`);
  if (existsSync(compile) && existsSync(runArchive)) return { compile, run: runArchive };
  const work = await ownedTempDir('berth-jvm-cds-');
  const suffix = `${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    const language = kotlin ? 'kotlin' : 'java';
    const train = TRAIN[language];
    const classes = join(work, 'classes');
    await mkdir(classes);
    const src: Record<string, string> = {};
    for (const kind of ['pass', 'fail', 'bad'] as const) {
      src[kind] = join(work, kind, train.file);
      await mkdir(join(work, kind));
      await writeFile(src[kind], train[kind]);
    }
    const compileTmp = `${compile}.${suffix}`;
    const runTmp = `${runArchive}.${suffix}`;
    const kc = language === 'kotlin' ? 'KC' : 'JC';
    const main = language === 'kotlin' ? 'MainKt' : 'Main';
    // The compiler: the two good programs, then the bad one, then EOF (the dump is at exit).
    await run(
      jdk.java,
      [
        ...COMPILER_JVM_OPTIONS,
        `-XX:ArchiveClassesAtExit=${compileTmp}`,
        '-Xlog:cds=off,cds+dynamic=off',
        '-cp',
        helper.jar,
        HELPER_CLASS,
        'compile',
        kotlin?.home ?? '-',
      ],
      `${kc}\t0\t${classes}\t\t${src.pass}\t${src.fail}\n${kc}\t1\t${classes}\t\t${src.bad}\n`,
      work,
      300_000,
    );
    // The runner: the passing program's main, then the failing one's.
    await run(
      jdk.java,
      [
        ...RUNNER_JVM_OPTIONS,
        '-ea',
        '-Djava.security.manager=allow',
        `-XX:ArchiveClassesAtExit=${runTmp}`,
        '-Xlog:cds=off,cds+dynamic=off',
        '-cp',
        runnerClasspath(helper, kotlin),
        HELPER_CLASS,
        'train',
        ...runnerPreload(kotlin),
      ],
      `RUN\t0\t${classes}\ttrain\t${main}\t65536\nRUN\t1\t${classes}\ttrainfail\t${main}\t65536\n`,
      work,
      120_000,
    );
    // Both made (a JVM that could not dump leaves no file): move them into place.
    await stat(compileTmp);
    await stat(runTmp);
    await rename(compileTmp, compile);
    await rename(runTmp, runArchive);
    return { compile, run: runArchive };
  } finally {
    await rm(work, { recursive: true, force: true });
    await Promise.all(
      [compile, runArchive].map((f) => rm(`${f}.${suffix}`, { force: true }).catch(() => undefined)),
    );
  }
}
