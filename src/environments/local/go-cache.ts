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
 *   hashes their files and imports, not CGO_ENABLED), so they hit; cgo packages are not warmed,
 *   nor what imports one (`net`, `os/user`): when the tests build any such package (`go list
 *   -deps -test` with cgo on), the step compiles nothing (outcome `cgo`), since the test run
 *   would compile all of it again (BurntSushi/toml's tests import `net`: twice the compile);
 * - berth merges only once no process of the trial's uid is left (`LocalEnvironment.prepareTestRun`):
 *   nothing of the step writes the copy while it is read;
 * - berth (not the trial's uid) then copies into the shared cache only files of Go's own layout
 *   it lacks, regular files read without following links (install-cache.ts `mergeGoCache`);
 *   Go's cache is content-addressed, so what the go tool made for sources X serves only sources X;
 * - every command of the environment runs with `-count=1` appended to GOFLAGS: no test result
 *   is ever served from a cache;
 * - a repository content already compiled (sha256 of its files and `go version`) is not compiled
 *   again; that hash is only a shortcut (a wrong one costs time, never a verdict).
 *
 * The agent itself only ever sees the entry's `go-build/` (compiled at the base commit): the
 * shared verifier cache holds compiled test packages, which it must not read.
 */
import { accessSync, constants } from 'node:fs';
import { delimiter, isAbsolute, join, posix } from 'node:path';
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
  options: { cgoCheck?: boolean } = {},
): string {
  const q = shellQuote(go);
  if (!isAbsolute(go)) throw new Error(`the go tool must be named by an absolute path: ${go}`);
  const compile = (args: string) => `${q} test -count=1 -run '^$' -exec /bin/true ${args} >/dev/null 2>&1`;
  const only = packages.map(shellQuote).join(' ');
  return [
    'exec 2>&1',
    // Files (not .git), names, modes and links; the toolchain and the packages: what go's action ids hang on.
    `berth_h=$({ ${q} version; echo ${shellQuote(only)}; /usr/bin/tar --exclude=./.git --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -cf - .; } 2>/dev/null | /usr/bin/sha256sum | /usr/bin/cut -c1-64)`,
    `echo "${CONTENT}$berth_h"`,
    `case " \${BERTH_GO_FILLED-} " in *" $berth_h "*) echo '${HIT}'; exit 0;; esac`,
    // With cgo off the step cannot warm a package with C files nor anything that imports one
    // (`net`, `os/user`...): the tests (cgo on) would compile it all again. `go list` reads
    // files and build tags only (no compiler, no linker).
    ...(options.cgoCheck === false
      ? []
      : [
          `if CGO_ENABLED=1 ${q} list -deps -test -f '{{if or .CgoFiles .SwigFiles .SwigCXXFiles}}c{{end}}' ./... 2>/dev/null | /usr/bin/grep -q c; then echo '${CGO}'; exit 0; fi`,
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
  exit?: number;
} {
  const content = new RegExp(`^${CONTENT}([0-9a-f]{64})$`, 'm').exec(output)?.[1];
  const exit = new RegExp(`^${EXIT}(\\d+)$`, 'm').exec(output)?.[1];
  return {
    ...(content ? { content } : {}),
    hit: output.split('\n').includes(HIT),
    cgo: output.split('\n').includes(CGO),
    ...(exit !== undefined ? { exit: Number(exit) } : {}),
  };
}
