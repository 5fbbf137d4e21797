/**
 * Finding the JVM toolchains: a JDK (java + javac, 17 or newer) and the Kotlin compiler.
 *
 * Kotlin comes from the npm package `kotlin-compiler` (a devDependency pinned to an exact version,
 * so `npm ci` installs it; it ships the whole compiler distribution: `bin/kotlinc`, `lib/*.jar`),
 * or from the folder named by `BERTH_KOTLIN_HOME`, or from a `kotlinc` on PATH.
 * The JDK comes from `BERTH_JAVA_HOME`, `JAVA_HOME` or PATH.
 */
import { execFile } from 'node:child_process';
import { existsSync, realpathSync } from 'node:fs';
import { createRequire } from 'node:module';
import { delimiter, dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { PrerequisiteError } from '../../errors.ts';

const execFileAsync = promisify(execFile);

/** The Kotlin version berth pins (package.json devDependency `kotlin-compiler`). */
export const PINNED_KOTLIN_VERSION = '2.4.20';

export const INSTALL_KOTLIN = `Kotlin samples need the Kotlin compiler: install the npm package kotlin-compiler, pinned (\`npm install --save-exact kotlin-compiler@${PINNED_KOTLIN_VERSION}\`; berth's own \`npm ci\` installs it), or set BERTH_KOTLIN_HOME to a Kotlin compiler distribution (the folder holding lib/kotlin-compiler.jar).`;
export const INSTALL_JDK =
  'Java and Kotlin samples need a JDK 17 or newer (java and javac): on Debian/Ubuntu `apt-get install default-jdk-headless`, or set BERTH_JAVA_HOME/JAVA_HOME.';

export interface JdkInfo {
  /** Absolute or PATH-resolvable `java` command. */
  java: string;
  /** `javac` command. */
  javac: string;
  /** `jar` command (beside javac). */
  jar: string;
  /** Major version, e.g. 17. */
  major: number;
  /** The full `java -version` first line. */
  versionLine: string;
}

export interface KotlinInfo {
  /** Distribution folder with `bin/kotlinc` and `lib/kotlin-compiler.jar`. */
  home: string;
  /** Version from `build.txt` (e.g. "2.4.20-release-..."), or "unknown". */
  version: string;
  /** `lib/kotlin-stdlib.jar`, put on the runner classpath (what `-include-runtime` packs into mxeval's jars). */
  stdlib: string;
}

function which(cmd: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    const p = join(dir, cmd);
    if (existsSync(p)) return p;
  }
  return undefined;
}

let jdkCache: Promise<JdkInfo> | undefined;

/**
 * Locates java and javac and checks the version.
 * @throws PrerequisiteError naming the Debian package when either is missing or older than 17.
 */
export function findJdk(): Promise<JdkInfo> {
  jdkCache ??= (async () => {
    const home = process.env.BERTH_JAVA_HOME ?? process.env.JAVA_HOME;
    const fromHome = (b: string) =>
      home && existsSync(join(home, 'bin', b)) ? join(home, 'bin', b) : undefined;
    const java = fromHome('java') ?? which('java');
    const javac = fromHome('javac') ?? which('javac');
    // jar lives beside the real javac (PATH usually holds a link through /etc/alternatives).
    const jar = javac ? join(dirname(realpathSync(javac)), 'jar') : undefined;
    if (!java || !javac)
      throw new PrerequisiteError(`${INSTALL_JDK} (${!java ? 'java' : 'javac'} not found)`);
    let versionLine = '';
    try {
      const r = await execFileAsync(java, ['-version'], { timeout: 30_000 });
      versionLine = `${r.stderr}${r.stdout}`.split('\n')[0] ?? '';
    } catch (err) {
      throw new PrerequisiteError(`${INSTALL_JDK} (\`${java} -version\` failed: ${(err as Error).message})`);
    }
    const m = /version "(\d+)(?:\.(\d+))?/.exec(versionLine);
    const major = m ? (m[1] === '1' ? Number(m[2]) : Number(m[1])) : 0;
    if (major < 17)
      throw new PrerequisiteError(`${INSTALL_JDK} (found: ${versionLine || 'unknown version'})`);
    return { java, javac, jar: jar && existsSync(jar) ? jar : 'jar', major, versionLine };
  })();
  jdkCache.catch(() => {
    jdkCache = undefined;
  });
  return jdkCache;
}

function kotlinHomeCandidates(): string[] {
  const out: string[] = [];
  if (process.env.BERTH_KOTLIN_HOME) out.push(process.env.BERTH_KOTLIN_HOME);
  try {
    const require = createRequire(import.meta.url);
    out.push(dirname(require.resolve('kotlin-compiler/package.json')));
  } catch {
    // not installed
  }
  const kotlinc = which('kotlinc');
  if (kotlinc) {
    try {
      out.push(dirname(dirname(realpathSync(kotlinc))));
    } catch {
      // dangling link
    }
  }
  return out;
}

let kotlinCache: Promise<KotlinInfo> | undefined;

/**
 * Locates the Kotlin compiler distribution.
 * @throws PrerequisiteError saying to install the npm package kotlin-compiler (pinned) when none is found.
 */
export function findKotlin(): Promise<KotlinInfo> {
  kotlinCache ??= (async () => {
    for (const home of kotlinHomeCandidates()) {
      const compilerJar = join(home, 'lib', 'kotlin-compiler.jar');
      const stdlib = join(home, 'lib', 'kotlin-stdlib.jar');
      if (!existsSync(compilerJar) || !existsSync(stdlib)) continue;
      let version = 'unknown';
      try {
        const { readFile } = await import('node:fs/promises');
        version = (await readFile(join(home, 'build.txt'), 'utf8')).trim();
      } catch {
        // no build.txt
      }
      return { home, version, stdlib };
    }
    throw new PrerequisiteError(INSTALL_KOTLIN);
  })();
  kotlinCache.catch(() => {
    kotlinCache = undefined;
  });
  return kotlinCache;
}
