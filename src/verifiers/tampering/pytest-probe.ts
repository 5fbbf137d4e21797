/**
 * berth's pytest probe: a pytest plugin berth loads into the test run (`-p`, through
 * `PYTEST_ADDOPTS`, from a folder of its own) that writes, at the end of pytest's session, a
 * machine-readable report of what pytest itself saw. The verifier checks that report against
 * the console and the exit code (src/verifiers/tampering/cross-check.ts).
 *
 * What it records (all of it facts, no verdict):
 * - `started`: written when the plugin is imported (before any conftest.py or test module):
 *   a run that has it but no report ended before pytest's session end (os._exit, a kill);
 * - per test id, the statuses pytest logged (PASSED, FAILED, ERROR, SKIPPED, XFAIL, XPASS);
 * - reports whose outcome changed after pytest's own hooks made them (a later hookwrapper of a
 *   conftest.py or plugin rewrote it), and reports that say passed although the test call
 *   raised (pytest's report objects patched);
 * - where a skip or xfail of a test was raised (the first frame outside pytest);
 * - pytest's internals (functions and classes of `_pytest` and `pluggy`) replaced while the
 *   tests ran, with the file the replacement comes from;
 * - the plugins pytest loaded (name, file), its ini file and `addopts`;
 * - how the collected test modules were loaded: each one's loader (a class other than the
 *   import system's and pytest's own means someone else's import hook produced its code), and
 *   the files of the code behind every import hook on `sys.meta_path` and `sys.path_hooks`;
 * - each collected test whose called code is not from the file that defines it (the code
 *   object found through the types, never through `__code__` or `__wrapped__` the object could
 *   fake), with where that code comes from and whether the test file defines the test with no
 *   decorators but pytest marks; and the profile and trace functions active at collection;
 * - the session's exit status and counts.
 *
 * The run's secret (nonce) reaches the probe through a file it reads and deletes on import, so
 * code that runs later in the process (conftest.py, the package, the tests) finds neither the
 * file nor the value in the environment; the report carries it back. The probe is written for
 * Python 3.5+ and pytest 3+ (no f-strings, old-style hookwrappers).
 *
 * pytest imports a `-p` plugin through its assertion rewriting hook, which parses the module
 * into Python's AST objects and compiles those, on every run (the probe's folder is new each
 * time and read-only, so no `.pyc` is kept): for the probe's 24 kB that parse alone was most of
 * its import (9.7 ms of CPU against 5.6 ms for a compile straight from the text, load 12). So
 * the module pytest imports (`PYTEST_PROBE_SOURCE`) is a loader: a docstring that opts out of
 * the rewriting (`PYTEST_DONT_REWRITE`; the probe has no `assert`) and the probe's code as one
 * string literal, compiled from the text and run in the loader's own namespace, as Python's
 * import system compiles a source file. The plugin pytest registers is that module: its
 * `__file__`, hooks and state are the probe's, as before.
 */

/** The probe's code (run by the loader module below). */
const PROBE_CODE = String.raw`"""berth's pytest probe (see berth: src/verifiers/tampering/pytest-probe.ts)."""
import json as _json
import os as _os
import sys as _sys

_OUT = _os.environ.pop("BERTH_PROBE_OUT", None)
_NONCE = None
if _OUT:
    try:
        _f = open(_os.path.join(_OUT, "nonce"))
        _NONCE = _f.read().strip()
        _f.close()
        _os.unlink(_os.path.join(_OUT, "nonce"))
    except (IOError, OSError):
        _NONCE = None
_ACTIVE = bool(_OUT and _NONCE)

# How the probe writes its files, taken now, before any code of the repository runs: code that
# patched json.dumps (or the json module's encoder, or os.write) at run time rewrote the report
# as it was written (trust19, corpus pytest-report-json-patched: a report without its
# test_origins let swapped tests pass). The C encoder is made once here; it calls no Python-level
# attribute of the json module afterwards (its string escaping is the C function taken here).
_JOIN = _os.path.join
_OS_OPEN = _os.open
_NEW_FILE = _os.O_WRONLY | _os.O_CREAT | _os.O_EXCL
_OS_WRITE = _os.write
_OS_CLOSE = _os.close
_RENAME = _os.rename
_GETPID = _os.getpid
_ISFILE = _os.path.isfile
_DUMPS = _json.dumps
_ENCODE = None
try:
    from json import encoder as _json_encoder

    def _unserialisable(obj):
        raise TypeError("not serialisable: %s" % type(obj).__name__)

    if _json_encoder.c_make_encoder is not None and _json_encoder.c_encode_basestring_ascii is not None:
        _ENCODE = _json_encoder.c_make_encoder(None, _unserialisable, _json_encoder.c_encode_basestring_ascii,
                                               None, ": ", ", ", False, False, True)
except Exception:
    _ENCODE = None


def _dumps(obj):
    if _ENCODE is not None:
        return "".join(_ENCODE(obj, 0))
    return _DUMPS(obj)


def _write(name, data):
    path = _JOIN(_OUT, name)
    tmp = "%s.%d.tmp" % (path, _GETPID())
    fd = _OS_OPEN(tmp, _NEW_FILE, 0o644)
    try:
        _OS_WRITE(fd, data.encode("utf-8"))
    finally:
        _OS_CLOSE(fd)
    _RENAME(tmp, path)


if _ACTIVE:
    try:
        _write("started", _dumps({"nonce": _NONCE, "pid": _GETPID()}))
    except (IOError, OSError):
        _ACTIVE = False

import pytest as _pytest  # noqa: E402

# What the probe's own checks call, taken now, before any code of the repository runs, so that
# code cannot make them fail or lie later by patching the modules they live in (a reviewer's
# finding, session 9: a patched ast.parse made every test's code "unknown", hence accepted).
import ast as _ast_mod  # noqa: E402
import types as _types_mod  # noqa: E402

_PARSE = _ast_mod.parse
_COMPILE = compile
_OPEN = open
_REALPATH = _os.path.realpath
_CODE_TYPE = _types_mod.CodeType
try:
    from _pytest.assertion.rewrite import rewrite_asserts as _REWRITE
except Exception:
    _REWRITE = None


def _installed_roots():
    roots = set()
    try:
        import site as _site
        import sysconfig as _sysconfig
        for key in ("stdlib", "platstdlib", "purelib", "platlib"):
            path = _sysconfig.get_paths().get(key)
            if path:
                roots.add(path)
        for path in list(getattr(_site, "getsitepackages", lambda: [])()) + [_site.getusersitepackages()]:
            roots.add(path)
    except Exception:
        pass
    for path in (_sys.prefix, _sys.base_prefix, _sys.exec_prefix):
        roots.add(path)
    return tuple(_REALPATH(r) for r in roots if r)


# The interpreter's installed code (its prefix, standard library and site-packages): a file
# outside these that is not the repository's was written by someone, not installed.
_INSTALLED = _installed_roots()


def _is_installed(path):
    try:
        real = _REALPATH(str(path))
    except Exception:
        return False
    return any(real == r or real.startswith(r.rstrip("/") + "/") for r in _INSTALLED)

_MODULES = (
    "_pytest.reports", "_pytest.runner", "_pytest.terminal", "_pytest.main", "_pytest.python",
    "_pytest.skipping", "_pytest.outcomes", "_pytest.capture", "_pytest.nodes", "_pytest.config",
    "_pytest.junitxml", "_pytest.unittest", "_pytest.fixtures", "pluggy", "pluggy._hooks",
    "pluggy._callers", "pluggy._manager", "pluggy.hooks", "pluggy.callers", "pluggy.manager",
)


def _code_of(obj):
    for attr in ("__func__", "fget"):
        obj = getattr(obj, attr, obj) or obj
    return getattr(obj, "__code__", None)


def _watched(value):
    return callable(value) or isinstance(value, (property, staticmethod, classmethod))


def _snapshot():
    seen = {}
    for modname in _MODULES:
        mod = _sys.modules.get(modname)
        if mod is None:
            continue
        for name, value in list(vars(mod).items()):
            if not _watched(value) or isinstance(value, type(_sys)):
                continue
            key = "%s.%s" % (modname, name)
            seen[key] = (id(value), id(_code_of(value)))
            if isinstance(value, type) and getattr(value, "__module__", "") == modname:
                for attr, member in list(vars(value).items()):
                    if _watched(member):
                        seen["%s.%s" % (key, attr)] = (id(member), id(_code_of(member)))
    return seen


def _lookup(key):
    parts = key.split(".")
    for i in range(len(parts), 0, -1):
        mod = _sys.modules.get(".".join(parts[:i]))
        if mod is not None:
            obj = mod
            for p in parts[i:]:
                obj = getattr(obj, p, None)
                if obj is None:
                    return None
            return obj
    return None


def _origin(obj):
    code = _code_of(obj)
    if code is not None:
        return code.co_filename
    mod = _sys.modules.get(getattr(obj, "__module__", None) or "")
    return getattr(mod, "__file__", None)


_BASELINE = _snapshot() if _ACTIVE else {}


def _allowed_loaders():
    import importlib.machinery as _machinery
    found = [_machinery.SourceFileLoader, _machinery.SourcelessFileLoader, _machinery.ExtensionFileLoader]
    try:
        import zipimport as _zipimport
        found.append(_zipimport.zipimporter)
    except Exception:
        pass
    try:
        from _pytest.assertion.rewrite import AssertionRewritingHook as _hook
        found.append(_hook)
    except Exception:
        pass
    return tuple(found)


# Taken before any conftest.py, plugin or test module of the repository is imported.
_LOADERS = _allowed_loaders() if _ACTIVE else ()


def _hook_files(hook):
    files = []
    own = None if isinstance(hook, type) else _code_of(hook)
    if own is not None:
        files.append(own.co_filename)
    for attr in ("find_spec", "find_module", "exec_module", "load_module", "create_module", "__call__"):
        try:
            code = _code_of(getattr(hook, attr, None))
        except Exception:
            code = None
        if code is not None:
            files.append(code.co_filename)
    cls = hook if isinstance(hook, type) else type(hook)
    f = getattr(_sys.modules.get(getattr(cls, "__module__", "") or ""), "__file__", None)
    if f:
        files.append(f)
    return [{"file": f, "exists": _ISFILE(f)} for f in files]


def _import_record(session):
    hooks = []
    for where, entries in (("meta_path", list(_sys.meta_path)), ("path_hooks", list(_sys.path_hooks))):
        for hook in entries:
            hooks.append({"where": where, "type": getattr(hook, "__qualname__", type(hook).__qualname__),
                          "files": _hook_files(hook)})
    modules = {}
    for item in session.items:
        try:
            module = getattr(item, "module", None)
        except Exception:
            module = None
        if module is None or module.__name__ in modules:
            continue
        spec = getattr(module, "__spec__", None)
        loader = getattr(spec, "loader", None) or getattr(module, "__loader__", None)
        path = getattr(loader, "path", None)
        modules[module.__name__] = {
            "file": getattr(module, "__file__", None),
            "loader": type(loader).__qualname__,
            "loader_allowed": type(loader) in _LOADERS,
            "loader_files": [] if type(loader) in _LOADERS else _hook_files(loader),
            "loader_path": path if isinstance(path, str) else None,
        }
    return {"hooks": hooks, "test_modules": modules}


def _real_path(path):
    try:
        return _REALPATH(str(path))
    except Exception:
        return None


# What one pass of the probe's checks (the collected tests' origins at collection's end; the
# replaced internals at the session's end) reads of a file, each read, compiled, parsed and walked
# at most once per pass: every check of a pass sees the same bytes of a file (not a test file's
# def lines from one version and its code from another), and the next pass reads it afresh
# (_forget), so a file changed between them is not judged by what it was.
_SOURCES = {}
_COMPILED = {}
_TREES = {}
_INDEX = {}


def _forget():
    for cache in (_SOURCES, _COMPILED, _TREES, _INDEX):
        cache.clear()


def _source(path):
    """The file's bytes, read once per pass; None when it cannot be read."""
    if path not in _SOURCES:
        try:
            with _OPEN(path, "rb") as f:
                _SOURCES[path] = f.read()
        except Exception:
            _SOURCES[path] = None
    return _SOURCES[path]


def _compiled(path, rewrite, config):
    """Every code object the file at path compiles to (after pytest's assertion rewriting when
    rewrite), by name and first line; None when it cannot be read or compiled here."""
    key = (path, rewrite)
    if key not in _COMPILED:
        found = None
        try:
            source = _source(path)
            if source is None:
                raise IOError(path)
            if rewrite:
                tree = _PARSE(source, filename=path)
                try:
                    _REWRITE(tree, source, path, config)
                except TypeError:
                    _REWRITE(tree, path, config)  # pytest < 5
                top = _COMPILE(tree, path, "exec", dont_inherit=True)
            else:
                # As Python's import system compiles a source file: from its bytes (the same code
                # as from its parsed tree, without building the tree's Python objects).
                top = _COMPILE(source, path, "exec", dont_inherit=True)
            found, stack = {}, [top]
            while stack:
                c = stack.pop()
                found.setdefault((c.co_name, c.co_firstlineno), []).append(c)
                stack.extend(k for k in c.co_consts if type(k) is _CODE_TYPE)
        except Exception:
            found = None
        _COMPILED[key] = found
    return _COMPILED[key]


def _def_lines(path, cls, name):
    """The first lines (a decorator's, as the code object has it) of the defs of name in the test
    file (in class cls, or at the top when cls is None): empty when none or unreadable."""
    lines = set()
    for node in _defs_of(path, cls, name) or []:
        lines.add(min([d.lineno for d in node.decorator_list] + [node.lineno]))
        lines.add(node.lineno)
    return lines


def _genuine(code, config):
    """Whether code is what the file it names (co_filename) compiles to, as is or as pytest's
    assertion rewriting compiles it: code made elsewhere that only claims the file and line
    (code.replace(co_filename=...)) is not. None when the file cannot be compiled here."""
    unknown = False
    # Both ways are tried before a verdict; the likelier first: pytest rewrites test files and
    # conftest.py, not its own installed code (whose members legacypath adds at configure time).
    for rewrite in (False, True) if _is_installed(code.co_filename) else (True, False):
        objs = _compiled(code.co_filename, rewrite, config)
        if objs is None:
            unknown = True
            continue
        for c in objs.get((code.co_name, code.co_firstlineno), ()):
            if c == code:
                return True
    return None if unknown else False


def _run_function(obj):
    """The Python function a call of obj runs, found through the types (never through attributes
    the object itself could fake: __code__ on an instance, __wrapped__); None when it is none."""
    for _ in range(6):
        kind = type(obj)
        if kind is _types_mod.FunctionType:
            return obj
        if kind is _types_mod.MethodType:
            obj = _types_mod.MethodType.__func__.__get__(obj)
            continue
        if kind in (staticmethod, classmethod):
            obj = kind.__func__.__get__(obj)
            continue
        call = None
        for klass in kind.__mro__:
            if "__call__" in vars(klass):
                call = vars(klass)["__call__"]
                break
        if call is None:
            return None
        obj = call
    return None


def _run_code(obj):
    """The code object a call of obj runs (see _run_function); None when it is no Python code."""
    fn = _run_function(obj)
    return None if fn is None else _types_mod.FunctionType.__code__.__get__(fn)


_CLASS_DEF = _ast_mod.ClassDef
_DEF_TYPES = (_ast_mod.FunctionDef, getattr(_ast_mod, "AsyncFunctionDef", _ast_mod.FunctionDef))
_CALL = _ast_mod.Call
_NAME = _ast_mod.Name
_ATTRIBUTE = _ast_mod.Attribute
_AST = _ast_mod.AST
_BLOCK_TYPES = tuple(getattr(_ast_mod, n) for n in ("stmt", "excepthandler", "match_case") if hasattr(_ast_mod, n))


def _nodes(node):
    """node and every node under it (as ast.walk, without the ast module's helpers, which code
    that runs before the probe's checks could replace)."""
    todo = [node]
    while todo:
        node = todo.pop()
        yield node
        for field in node._fields:
            value = getattr(node, field, None)
            if isinstance(value, _AST):
                todo.append(value)
            elif type(value) is list:
                todo.extend(v for v in value if isinstance(v, _AST))


def _tree(path):
    """The file's tree, parsed once per pass; None when the file is unreadable."""
    if path not in _TREES:
        try:
            _TREES[path] = _PARSE(_source(path))
        except Exception:
            _TREES[path] = None
    return _TREES[path]


def _index(path):
    """The file's tree with, found from it once per pass: its class nodes by name and its def
    nodes by (name, a first line: the def's or a decorator's, as a code object may have it), at
    any depth; and room for what is found from those. None when the file is unreadable."""
    if path not in _INDEX:
        tree = _tree(path)
        found = None
        if tree is not None:
            found = {"tree": tree, "classes": {}, "defs": {}, "calls": {}, "scopes": {}}
            # Classes and defs are statements: only lists of statements (and an except clause's
            # or a match case's) are walked, not the expressions that make most of a tree.
            todo = [tree]
            while todo:
                node = todo.pop()
                if isinstance(node, _CLASS_DEF):
                    found["classes"].setdefault(node.name, []).append(node)
                elif isinstance(node, _DEF_TYPES):
                    for line in set([node.lineno] + [d.lineno for d in node.decorator_list]):
                        found["defs"].setdefault((node.name, line), []).append(node)
                for field in node._fields:
                    value = getattr(node, field, None)
                    if type(value) is list:
                        todo.extend(v for v in value if isinstance(v, _BLOCK_TYPES))
        _INDEX[path] = found
    return _INDEX[path]


def _classes_of(path, cls):
    """The class nodes named cls in the test file (at any depth)."""
    index = _index(path)
    return [] if index is None else index["classes"].get(cls, [])


def _defs_of(path, cls, name):
    """The def nodes of name in the test file (in class cls, or at the top when cls is None); None
    when the file is unreadable."""
    index = _index(path)
    if index is None:
        return None
    key = (cls, name)
    if key not in index["scopes"]:
        scopes = [index["tree"].body] if cls is None else [n.body for n in _classes_of(path, cls)]
        index["scopes"][key] = [node for body in scopes for node in body
                                if isinstance(node, _DEF_TYPES) and node.name == name]
    return index["scopes"][key]


def _decorated(decorators):
    """Whether a decorator list holds one other than pytest marks."""
    for deco in decorators:
        target = deco.func if isinstance(deco, _CALL) else deco
        parts = []
        while isinstance(target, _ATTRIBUTE):
            parts.append(target.attr)
            target = target.value
        if isinstance(target, _NAME):
            parts.append(target.id)
        if "mark" not in parts:
            return True
    return False


def _plain_def(path, cls, name):
    """Whether the test file defines name (in class cls, or at the top when cls is None) with no
    decorators but pytest marks: None when it has no such def (made by assignment) or is unreadable."""
    found = None
    for node in _defs_of(path, cls, name) or []:
        plain = not _decorated(node.decorator_list)
        found = plain if found is None else (found and plain)
    return found


def _calls_free(code, index):
    """Whether the def that compiled to code (found in its file's tree by name and first line)
    calls its free variable number index by name (mock.patch's wrapper calls func(...);
    contextlib.contextmanager's helper only passes it on). The names each def calls are found
    once per pass (a class decorator's wrapper is asked about once per test)."""
    if index >= len(code.co_freevars):
        return False
    found = _index(code.co_filename)
    if found is None:
        return False
    key = (code.co_name, code.co_firstlineno)
    if key not in found["calls"]:
        found["calls"][key] = set(
            sub.func.id for node in found["defs"].get(key, ()) for sub in _nodes(node)
            if isinstance(sub, _CALL) and isinstance(sub.func, _NAME))
    return code.co_freevars[index] in found["calls"][key]


def _held(fn, config):
    """The Python functions fn's closure holds (a function in a cell, or a bound method's
    function) whose code is what its own file compiles to, each with its cell's index. Found
    through the types (never __wrapped__)."""
    out = []
    for index, cell in enumerate(_types_mod.FunctionType.__closure__.__get__(fn) or ()):
        try:
            value = cell.cell_contents
        except ValueError:
            continue
        if type(value) not in (_types_mod.FunctionType, _types_mod.MethodType):
            continue
        inner = _run_function(value)
        if inner is not None and _genuine(_types_mod.FunctionType.__code__.__get__(inner), config) is True:
            out.append((index, inner))
    return out


def _holds_own(fn, module, path, cls, name, config):
    """Whether fn (a class decorator's wrapper of a test method: mock.patch or freezegun's
    freeze_time on a class) calls, through its closure and functions at most three deep, the
    function the test file's def of name in class cls compiles to, with its module's own globals:
    the wrapper of that def, not a no-op put in its place. Each wrapper on the way must be what
    its file compiles to, and its def must call the closure's variable that holds the next one."""
    if _genuine(_types_mod.FunctionType.__code__.__get__(fn), config) is not True:
        return False
    own = getattr(module, "__dict__", None)
    lines = None
    stack = [(fn, 0)]
    visited = 0
    while stack and visited < 16:
        f, depth = stack.pop()
        visited += 1
        fcode = _types_mod.FunctionType.__code__.__get__(f)
        for index, g in _held(f, config):
            if not _calls_free(fcode, index):
                continue
            code = _types_mod.FunctionType.__code__.__get__(g)
            if code.co_name == name and _types_mod.FunctionType.__globals__.__get__(g) is own \
                    and _real_path(code.co_filename) == path:
                if lines is None:
                    lines = _def_lines(path, cls, name)
                if code.co_firstlineno in lines:
                    return True
            if depth < 3:
                stack.append((g, depth + 1))
    return False


def _proxied(fn, config):
    """For fn whose code claims the test file but is not what it compiles to: the one Python
    function its closure holds, when its code is what its own file compiles to (hypothesis's
    given makes each test a proxy that calls its wrapper, with the test's file and line given by
    code.replace); else None."""
    if len(_types_mod.FunctionType.__code__.__get__(fn).co_freevars) != 1:
        return None
    held = _held(fn, config)
    return held[0][1] if held else None


def _test_origins(session):
    """Test items whose called code is not from the file that defines them (the test module, or
    for an inherited method the module of the class that defines it); one pass (see _SOURCES)."""
    try:
        return _origins(session)
    finally:
        _forget()


def _origins(session):
    out = []
    seen = {}
    real = {}

    def real_path(path):
        # One realpath (an lstat per component) per file, not two per test; keyed by a plain str.
        try:
            key = "%s" % (path,)
        except Exception:
            return None
        if key not in real:
            real[key] = _real_path(key)
        return real[key]

    for item in session.items:
        try:
            if not hasattr(item, "originalname"):
                continue
            module = getattr(item, "module", None)
            expected = real_path(getattr(module, "__file__", None) or "")
            name = item.originalname or item.name.split("[")[0]
            cls = getattr(item, "cls", None)
            owner = None
            if cls is not None:
                for klass in type.mro(cls):
                    if name in type.__dict__["__dict__"].__get__(klass):
                        owner = klass
                        break
                if owner is not None:
                    mod = _sys.modules.get(type.__dict__["__module__"].__get__(owner) or "")
                    expected = real_path(getattr(mod, "__file__", None) or "") or expected
                    module = mod if getattr(mod, "__file__", None) else module
            if not expected:
                continue
            fn = _run_function(item.obj)
            code = None if fn is None else _types_mod.FunctionType.__code__.__get__(fn)
            cfile = real_path(code.co_filename) if code is not None else None
            key = (expected, owner.__name__ if owner is not None else None, name)
            if key not in seen:
                seen[key] = _plain_def(expected, key[1], name)
            plain = seen[key]
            # ... run with the module's own globals (not a copy in which what the test calls is
            # faked: the lead's attack, session 9).
            own_globals = fn is not None and \
                _types_mod.FunctionType.__globals__.__get__(fn) is getattr(module, "__dict__", None)
            forged = False
            genuine = None
            if cfile == expected:
                # Code that names the test file must be what that file compiles to (unknown, when
                # the file cannot be compiled again, counts as not: pytest compiled it), and for a
                # test the file defines plainly, that def's own code (not the module body or
                # another function of the file: a reviewer's finding, session 9).
                genuine = _genuine(code, session.config) is True and own_globals
                if genuine and (plain is not True or (
                        code.co_name == name and code.co_firstlineno in _def_lines(expected, key[1], name))):
                    continue
                forged = True
                # A decorated test whose decorator made it a proxy claiming the test file
                # (hypothesis's given, trust19): what counts is the function the proxy holds, as
                # for any decorated test (its decorator's code, noted); a plainly defined test's
                # code must still be its own.
                inner = _proxied(fn, session.config) if plain is False and not genuine else None
                if inner is not None:
                    fn = inner
                    code = _types_mod.FunctionType.__code__.__get__(fn)
                    cfile = real_path(code.co_filename)
                    forged = False
                    if cfile == expected and _types_mod.FunctionType.__globals__.__get__(fn) is \
                            getattr(module, "__dict__", None):
                        continue
            # A test of a class with a decorator other than pytest marks (mock.patch, freezegun's
            # freeze_time on a class wrap every test method): its def is plain but the test calls
            # the class decorator's wrapper, as a decorated test calls its decorator's (trust19).
            # Allowed so only when the wrapper holds the def's own function (a no-op wrapped by
            # mock.patch in its place is still swapped): once per such test, none for the others.
            if plain is True and key[1] is not None and fn is not None and genuine is not False:
                ckey = (expected, key[1])
                if ckey not in seen:
                    seen[ckey] = any(_decorated(n.decorator_list) for n in _classes_of(expected, key[1]))
                if seen[ckey] and _holds_own(fn, module, expected, key[1], name, session.config):
                    if cfile == expected:
                        continue
                    plain = False
            out.append({"id": item.nodeid, "test_file": expected,
                        "file": code.co_filename if code is not None else None,
                        "line": code.co_firstlineno if code is not None else None,
                        "file_exists": bool(cfile and _ISFILE(cfile)),
                        "plain_def": plain, "forged": forged})
        except Exception as e:
            out.append({"id": getattr(item, "nodeid", "?"), "error": repr(e)})
    return out


def _hooks_active():
    """The profile and trace functions active now (this thread), with the file of their code."""
    found = []
    for kind, get in (("profile", getattr(_sys, "getprofile", None)), ("trace", getattr(_sys, "gettrace", None))):
        fn = get() if get else None
        if fn is None:
            continue
        code = _run_code(fn)
        found.append({"kind": kind, "file": code.co_filename if code is not None else None,
                      "file_exists": bool(code is not None and _ISFILE(code.co_filename))})
    return found
_STATUS = {}
_REWRITTEN = []
_RAISED_BUT_PASSED = []
_SKIP_ORIGINS = []
_MADE = {}
_STATE = {}


def _is_pytest_file(path):
    p = str(path).replace("\\", "/")
    return "/_pytest/" in p or "/pluggy/" in p or p.endswith("/pytest/__init__.py")


def _raise_site(excinfo):
    try:
        entries = list(excinfo.traceback)
    except Exception:
        return None
    for entry in reversed(entries):
        path = str(getattr(entry, "path", getattr(entry, "frame", None) and entry.frame.code.path))
        if not _is_pytest_file(path):
            return {"file": path, "line": entry.lineno + 1}
    return None


def _status(report):
    if getattr(report, "wasxfail", None) is not None or hasattr(report, "wasxfail"):
        if report.skipped:
            return "XFAIL"
        if report.passed:
            return "XPASS"
    if report.passed:
        return "PASSED" if report.when == "call" else None
    if report.failed:
        return "FAILED" if report.when == "call" else "ERROR"
    if report.skipped:
        return "SKIPPED"
    return None


def _ours(config=None):
    """True inside the first session only (pytester runs sessions inside the tests' session)."""
    if not _ACTIVE or _STATE.get("depth") != 1:
        return False
    return config is None or config is _STATE.get("config")


@_pytest.hookimpl(tryfirst=True)
def pytest_configure(config):
    _STATE["depth"] = _STATE.get("depth", 0) + 1
    if "config" not in _STATE:
        _STATE["config"] = config


@_pytest.hookimpl(trylast=True)
def pytest_unconfigure(config):
    _STATE["depth"] = _STATE.get("depth", 1) - 1


@_pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    if not _ours(item.config):
        return
    try:
        report = outcome.get_result()
    except BaseException:
        return
    _MADE[(report.nodeid, report.when)] = (report.outcome, hasattr(report, "wasxfail"))
    excinfo = call.excinfo
    if excinfo is not None and report.outcome == "passed" and not hasattr(report, "wasxfail"):
        _RAISED_BUT_PASSED.append({"id": report.nodeid, "when": report.when, "exception": excinfo.typename})
    if excinfo is not None and report.outcome == "skipped":
        site = _raise_site(excinfo)
        if site is not None:
            site.update({"id": report.nodeid, "when": report.when,
                         "kind": "xfail" if hasattr(report, "wasxfail") else "skip"})
            _SKIP_ORIGINS.append(site)


def pytest_runtest_logreport(report):
    if not _ours():
        return
    made = _MADE.pop((report.nodeid, report.when), None)
    if made is not None and made != (report.outcome, hasattr(report, "wasxfail")):
        _REWRITTEN.append({"id": report.nodeid, "when": report.when, "made": made[0], "logged": report.outcome})
    status = _status(report)
    if status is not None:
        statuses = _STATUS.setdefault(report.nodeid, [])
        if status not in statuses:
            statuses.append(status)


def pytest_collectreport(report):
    if _ours() and report.failed:
        _STATUS.setdefault(report.nodeid or "<collection>", []).append("ERROR")


def pytest_collection_finish(session):
    if _ours(session.config):
        _STATE["collected"] = len(session.items)
        try:
            _STATE["imports"] = _import_record(session)
        except Exception as e:
            _STATE["imports"] = {"error": repr(e)}
        try:
            _STATE["test_origins"] = _test_origins(session)
        except Exception as e:
            _STATE["test_origins"] = [{"id": "<collection>", "error": repr(e)}]
        try:
            _STATE["trace_hooks"] = _hooks_active()
        except Exception:
            _STATE["trace_hooks"] = []


@_pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session, exitstatus):
    if not _ours(session.config):
        return
    changed = []
    _forget()
    now = _snapshot()
    for key, ident in now.items():
        # A replaced function or class (or its code), or a method added to one of pytest's classes.
        new_member = key not in _BASELINE and key.count(".") > 1 and _lookup(key.rsplit(".", 1)[0]) is not None \
            and isinstance(_lookup(key.rsplit(".", 1)[0]), type)
        if _BASELINE.get(key, ident) != ident or (_BASELINE and new_member):
            obj = _lookup(key)
            origin = _origin(obj)
            code = _code_of(obj)
            # Whether the replacement is what the file it names compiles to (None: no code, or
            # the file cannot be compiled here): code that only claims a file is not.
            genuine = _genuine(code, session.config) if type(code) is _CODE_TYPE else None
            installed = bool(origin and _is_installed(origin))
            if origin and installed and _is_pytest_file(origin) and genuine is not False:
                # pytest's own plugins (legacypath adds properties at configure time); a member
                # replaced by pytest's own code must be code of that name (not Node.setup, a
                # no-op, put in Function.runtest's place: a reviewer's finding, session 9).
                attr = key.rsplit(".", 1)[-1]
                if new_member or (code is not None and (code.co_name == attr or (
                        code.co_name.endswith("_" + attr) and origin.endswith("/legacypath.py")))):
                    continue
                genuine = False
            changed.append({"name": key, "file": origin, "file_exists": bool(origin and _ISFILE(origin)),
                            "genuine": genuine, "installed": installed})
    plugins = []
    try:
        for name, plugin in session.config.pluginmanager.list_name_plugin():
            f = getattr(plugin, "__file__", None)
            if f is None:
                f = getattr(_sys.modules.get(getattr(type(plugin), "__module__", "") or ""), "__file__", None)
            if f is not None and not (_is_pytest_file(f) and _is_installed(f)):
                plugins.append({"name": str(name), "file": f, "installed": _is_installed(f),
                                "probe": _real_path(f) == _real_path(__file__)})
    except Exception:
        pass
    config = session.config
    inifile = getattr(config, "inipath", None) or getattr(config, "inifile", None)
    try:
        addopts = config.getini("addopts")
    except Exception:
        addopts = []
    report = {
        "nonce": _NONCE,
        "pid": _GETPID(),
        "pytest": getattr(_pytest, "__version__", None),
        "rootdir": str(getattr(config, "rootpath", None) or getattr(config, "rootdir", "")),
        "inifile": str(inifile) if inifile else None,
        "addopts": [str(a) for a in addopts],
        "plugins": plugins,
        "tests": _STATUS,
        "rewritten": _REWRITTEN,
        "raised_but_passed": _RAISED_BUT_PASSED,
        "skip_origins": _SKIP_ORIGINS,
        "internals_changed": changed,
        "imports": _STATE.get("imports"),
        "test_origins": _STATE.get("test_origins"),
        "trace_hooks": _STATE.get("trace_hooks"),
        "exitstatus": int(exitstatus),
        "collected": _STATE.get("collected"),
        "testsfailed": getattr(session, "testsfailed", None),
        "testscollected": getattr(session, "testscollected", None),
        "shouldstop": bool(getattr(session, "shouldstop", False)),
        "shouldfail": bool(getattr(session, "shouldfail", False)),
    }
    try:
        _write("report.json", _dumps(report))
    except (IOError, OSError, TypeError, ValueError):
        pass
`;

/**
 * The probe's module as pytest imports it (`-p`): the loader (see the module comment). The code
 * is a JSON string literal, which Python reads as the same text (JSON's escapes are Python's).
 */
export const PYTEST_PROBE_SOURCE = `"""berth's pytest probe, loader (see berth: src/verifiers/tampering/pytest-probe.ts).

PYTEST_DONT_REWRITE: the probe has no assert; pytest compiles this module as it is, and the probe's
code is compiled straight from its text below (no AST objects built for it).
"""
exec(compile(${JSON.stringify(PROBE_CODE)}, __file__, "exec", dont_inherit=True))
`;
