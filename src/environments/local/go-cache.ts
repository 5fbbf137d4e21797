/**
 * Go rows at the speed of their tests (issue 18): the verifier's Go build cache of a local
 * environment started from the install cache (install-cache.ts).
 *
 * A later trial of a snapshot compiles the patched and test-patched packages anew, where the
 * tests' raw folder has them cached. So before the test run (`LocalEnvironment.prepareTestRun`)
 * the go tool alone compiles the trial's repository into a fresh copy of the entry's shared
 * verifier cache (`go-verify/`), and berth adds what it made to that cache for later trials:
 *
 * - the agent's build cache is dropped (an agent could plant an entry that makes an unchanged
 *   package's object code its own: a forged pass); the test run gets the fresh copy;
 * - the compile step runs `go test -count=1 -run '^$' -exec /bin/true ./...` (compile, vet, link;
 *   every test binary "run" by /bin/true) with CGO_ENABLED=0 (no C compiler, no external linker:
 *   go 1.19's known code-execution bugs of a build, CVE-2023-39323/29404/29402, all reach gcc or
 *   ld through cgo: breaker5's findings 1 and 2), GOFLAGS, GOENV, the cgo flag variables and
 *   compilers reset to go's defaults, GOTOOLCHAIN=local, PATH of the system's folders only and
 *   every tool named by absolute path; `-count=1` keeps go from caching the fake `ok` of /bin/true
 *   as a test result. Pure-Go packages get the same action ids as in a test run with cgo on (go
 *   hashes their files and imports, not CGO_ENABLED), so they hit. When a package outside the
 *   standard library that the tests build has C, SWIG or .syso files (`go list -e -deps -test`
 *   with cgo on; a package go cannot load counts as one), the step compiles nothing (outcome
 *   `cgo`): the test run compiles it. When only standard packages use cgo (`net`, `os/user`,
 *   `runtime/cgo`: BurntSushi/toml's tests import `net`), the step runs with CGO_ENABLED=1, as
 *   the test run will (with cgo off, everything importing `net` gets other keys and the test run
 *   compiled it all again): gcc then compiles only the standard library's C files with its own
 *   flags (the repository has no cgo file to put a flag in), and GO_EXTLINK_ENABLED=0 keeps the
 *   link internal, so a `//go:cgo_ldflag` smuggled into a Go file by `//line` (CVE-2023-39323)
 *   reaches no linker (go-cache.test.ts plants one, with `ld` and `gcc` in the repository);
 * - berth merges only once no process of the trial's uid is left (`LocalEnvironment.prepareTestRun`):
 *   nothing of the step writes the copy while it is read;
 * - berth (not the trial's uid) then copies into the shared cache only files of Go's own layout
 *   it lacks, regular files read without following links (install-cache.ts `mergeGoCache`);
 *   Go's cache is content-addressed, so what the go tool made for sources X serves only sources X;
 * - every command of the environment runs with `-count=1` appended to GOFLAGS: no test result
 *   is ever served from a cache;
 * - a repository content already compiled (sha256 of its files and `go version`) is not compiled
 *   again; that hash is only a shortcut (a wrong one costs time, never a verdict). berth computes
 *   it itself ({@link repositoryContent}: the files read without following a link, as the tamper
 *   fingerprints are), so a hit runs no command at all; only when berth's walk gives up (a cap, a
 *   name that is not UTF-8) does the sandboxed step hash the files with `tar` as before.
 *
 * The agent itself only ever sees the entry's `go-build/` (compiled at the base commit): the
 * shared verifier cache holds compiled test packages, which it must not read.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { accessSync, constants } from 'node:fs';
import { delimiter, isAbsolute, join, posix } from 'node:path';
import { promisify } from 'node:util';
import { treeDigestBeneath } from '../../util/safe-fs.ts';
import { shellQuote } from '../../util/shell.ts';

/** The go tool on the host's PATH (absolute folders only), if any: the sandbox sees the host read-only. */
export function goTool(): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (!isAbsolute(dir)) continue;
    const path = join(dir, 'go');
    try {
      accessSync(path, constants.X_OK);
      return path;
    } catch {}
  }
  return undefined;
}

/** GOFLAGS for every command of a local environment: the host's with `-count=1` last (no cached test result). */
export function goFlags(host: string | undefined = process.env.GOFLAGS): string {
  return host?.trim() ? `${host.trim()} -count=1` : '-count=1';
}

/** The compile step's PATH: the system's folders (root's, read-only in the sandbox), nothing else. */
export const SYSTEM_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/**
 * Variables of the compile step: go's own defaults for everything that could make it run
 * something besides the go tool (`-toolexec` in GOFLAGS, a `go env -w` file, cgo flags beyond
 * go's allow list, another compiler or pkg-config, a toolchain download).
 */
export const COMPILE_ENV: Readonly<Record<string, string>> = Object.fromEntries([
  // No cgo: gcc and the external linker never run, so no flag of the repository's choosing
  // (`-B<dir>`, a plugin, a spec file) can make them run its code (breaker5, CVE-2023-39323).
  ['CGO_ENABLED', '0'],
  // The linker never hands over to an external one (`gcc`), whatever an object asks for.
  ['GO_EXTLINK_ENABLED', '0'],
  // Tools are named by absolute path; nothing under the repository, HOME or /tmp is searched.
  ['PATH', SYSTEM_PATH],
  ['GOFLAGS', ''],
  ['GOENV', 'off'],
  ['GOTOOLCHAIN', 'local'],
  ['GOPROXY', 'off'],
  ['GOEXPERIMENT', ''],
  ...['CC', 'CXX', 'FC', 'AR', 'GCCGO', 'PKG_CONFIG', 'CGO_LDFLAGS', 'CGO_CFLAGS', 'CGO_CPPFLAGS']
    .concat(['CGO_CXXFLAGS', 'CGO_FFLAGS'])
    .flatMap((name) => (name.startsWith('CGO_') ? [name, `${name}_ALLOW`, `${name}_DISALLOW`] : [name]))
    .map((name) => [name, '']),
]);

const CONTENT = '@@berth-go-content ';
const HIT = '@@berth-go-hit@@';
const CGO = '@@berth-go-cgo@@';
const STD_CGO = '@@berth-go-std-cgo@@';
const EXIT = '@@berth-go-exit ';

/**
 * The packages (`./dir`) of the Go test files among `testFiles` (paths relative to the
 * repository), sorted, each once; paths that climb out or are absolute are left out.
 */
export function goPackagesOf(testFiles: readonly string[]): string[] {
  const dirs = new Set<string>();
  for (const file of testFiles) {
    if (!file.endsWith('.go') || isAbsolute(file) || file.split('/').includes('..')) continue;
    const dir = posix.dirname(posix.normalize(file));
    dirs.add(dir === '.' ? '.' : `./${dir}`);
  }
  return [...dirs].sort();
}

/**
 * The compile step's script (run in the repository, sandboxed): prints the repository's content
 * hash, stops when `filled` (the variable BERTH_GO_FILLED, space-separated) names it, else
 * compiles with `go` every package and its tests (`./...`), then `packages` alone: go builds a
 * test's packages differently when others are tested with it (a package the tests import that
 * imports the package under test), so each set a test command may name is compiled as it will be.
 */
export function compileScript(
  go: string,
  packages: readonly string[] = [],
  options: { cgoCheck?: boolean; content?: string } = {},
): string {
  const q = shellQuote(go);
  if (!isAbsolute(go)) throw new Error(`the go tool must be named by an absolute path: ${go}`);
  if (options.content !== undefined && !/^[0-9a-f]{64}$/.test(options.content))
    throw new Error(`not a content hash: ${options.content}`);
  const compile = (args: string) => `${q} test -count=1 -run '^$' -exec /bin/true ${args} >/dev/null 2>&1`;
  const only = packages.map(shellQuote).join(' ');
  return [
    'exec 2>&1',
    // Files (not .git), names, modes and links; the toolchain and the packages: what go's action
    // ids hang on. berth's own hash when it has one (repositoryContent), else tar's.
    options.content !== undefined
      ? `berth_h=${options.content}`
      : `berth_h=$({ ${q} version; echo ${shellQuote(only)}; /usr/bin/tar --exclude=./.git --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -cf - .; } 2>/dev/null | /usr/bin/sha256sum | /usr/bin/cut -c1-64)`,
    `echo "${CONTENT}$berth_h"`,
    `case " \${BERTH_GO_FILLED-} " in *" $berth_h "*) echo '${HIT}'; exit 0;; esac`,
    // A package outside the standard library with files for gcc or the external linker (cgo,
    // C/C++/ObjC/Fortran, SWIG, .syso): nothing is compiled, the tests compile it all. Else, when
    // a standard package the tests build uses cgo (`net`, `os/user`, `runtime/cgo`), the step
    // compiles with cgo on, as the tests will (with cgo off every package importing `net`
    // would get other cache keys); gcc then sees only the standard library's C files and
    // flags, with `-B`, `-l` and the like out of the repository's reach (it has no cgo file),
    // and GO_EXTLINK_ENABLED=0 keeps the link internal (a `//go:cgo_ldflag` smuggled into a Go
    // file by `//line`, CVE-2023-39323, reaches no linker). `go list` reads files and build
    // tags only (no compiler, no linker).
    ...(options.cgoCheck === false
      ? []
      : [
          // A package go cannot load (an error) counts as one with C files: nothing is compiled.
          `berth_cgo=$(CGO_ENABLED=1 ${q} list -e -deps -test -f '{{if or .Error .DepsErrors}}c{{end}}{{if or .CgoFiles .CFiles .CXXFiles .MFiles .FFiles .SwigFiles .SwigCXXFiles .SysoFiles}}{{if .Standard}}s{{else}}c{{end}}{{end}}' ./... ${only} 2>/dev/null) || berth_cgo=c`,
          `case "$berth_cgo" in *c*) echo '${CGO}'; exit 0;; *s*) echo '${STD_CGO}'; export CGO_ENABLED=1;; esac`,
        ]),
    compile('./...'),
    'berth_rc=$?',
    // Every one starts with `.` (goPackagesOf): never read as a flag.
    ...(only !== '' ? [compile(only), 'berth_rc=$((berth_rc | $?))'] : []),
    `echo "${EXIT}$berth_rc"`,
  ].join('\n');
}

/** What the compile step printed: the content hash, and whether it was already compiled. */
export function readCompileOutput(output: string): {
  content?: string;
  hit: boolean;
  cgo: boolean;
  /** Compiled with cgo on: a standard package the tests build uses cgo, no other package does. */
  stdCgo: boolean;
  exit?: number;
} {
  const content = new RegExp(`^${CONTENT}([0-9a-f]{64})$`, 'm').exec(output)?.[1];
  const exit = new RegExp(`^${EXIT}(\\d+)$`, 'm').exec(output)?.[1];
  return {
    ...(content ? { content } : {}),
    hit: output.split('\n').includes(HIT),
    cgo: output.split('\n').includes(CGO),
    stdCgo: output.split('\n').includes(STD_CGO),
    ...(exit !== undefined ? { exit: Number(exit) } : {}),
  };
}

const versions = new Map<string, Promise<string | undefined>>();

/**
 * `go version` of the go tool `go` (the host's, absolute), once per process, with the compile
 * step's variables (no `go env -w` file, no toolchain switch); undefined when it fails.
 */
export function goVersion(go: string): Promise<string | undefined> {
  let version = versions.get(go);
  if (!version) {
    version = promisify(execFile)(go, ['version'], {
      env: { ...COMPILE_ENV },
      cwd: '/',
      timeout: 30_000,
    }).then(
      ({ stdout }) => stdout.trim() || undefined,
      () => undefined,
    );
    versions.set(go, version);
  }
  return version;
}

/**
 * The content hash of a trial's repository for the compile step (what go's action ids hang on:
 * its files but `.git`, with names, modes and link targets; the toolchain; the packages compiled
 * alone), read by berth without following a link (safe-fs.ts `treeDigestBeneath`: nothing the
 * trial left there is run or followed). `tree`: the whole repository. `changes` and `entry`: the
 * repository is an overlay on the install-cache entry `entry` (whose `repo/` never changes once
 * saved), `changes` its upper folder, which holds all the trial changed (files, whiteouts for
 * removals): only that is read, a few files where the whole tree is hundreds. Overlay metadata
 * in extended attributes (an opaque or renamed folder) is not read: two trees that differ only
 * there get one hash, which costs the test run a compile, never a verdict. Undefined when the
 * walk gave up or go's version is unknown: the sandboxed step then hashes the files itself.
 */
export async function repositoryContent(
  repo: { tree: string } | { changes: string; entry: string },
  go: string,
  packages: readonly string[],
): Promise<string | undefined> {
  const [version, tree] = await Promise.all([
    goVersion(go),
    treeDigestBeneath('tree' in repo ? repo.tree : repo.changes, { skipTop: ['.git'] }).catch(
      () => undefined,
    ),
  ]);
  if (version === undefined || tree === undefined) return undefined;
  const what = 'tree' in repo ? `tree ${tree}` : `entry ${repo.entry} changes ${tree}`;
  return createHash('sha256')
    .update(`berth go content 1\n${version}\n${packages.join(' ')}\n${what}\n`)
    .digest('hex');
}
