/**
 * The fork server's helper in Python, preferred where a trusted `python3` (3.8 or later) is: it
 * starts commands with `posix_spawn`, which glibc implements with a `vfork`-like clone: nothing
 * of the helper is copied, so neither the helper nor the command pays a copy-on-write fault for
 * each page either of them touches before the exec (measured on this project's VM: 1.9 ms per
 * start-and-reap of `/bin/true` against 4.7 ms for perl's fork, and a third of the CPU).
 * It speaks the protocol described in `fork-server.ts`, as the perl helper does.
 *
 * `posix_spawn` runs no code of ours in the child, so the helper arranges everything first: it
 * enters the command's folder, the child's 0-2 are put in place by file actions, the session by
 * `setsid`, every signal back to its default and an empty mask by the spawn's attributes, and
 * the cgroups by stepping the helper itself into the command's groups for the spawn (`0` into
 * each group's `tasks`: the writing thread, here the whole process) and back home afterwards (a
 * child is born in its parent's groups). Without a home to go back to (cgroup v2, where the server does not say it),
 * an empty `argv[0]` (Python refuses it), or when a step into a group fails, it forks as the perl
 * helper does, and the child joins the groups itself (a failure is then the command's: a line on
 * stderr, exit 125). If the helper cannot go home it ends: commands then fork in the server.
 *
 * An exec that fails with ENOEXEC (a script without `#!`) is retried through `/bin/sh`, as
 * `execvp` (libuv's, perl's) does.
 *
 * It also starts commands in a terminal the server opened (`stdin` is then the slave's path): it
 * gives the terminal node-pty's settings, and the child opens it after its `setsid` (so it is its
 * controlling terminal) on 0-2.
 */
export const PYTHON_HELPER: string = String.raw`
import errno, os, select, signal
if not hasattr(os, 'posix_spawn'):
    os._exit(3)
try: import termios
except ImportError: termios = None
for name in os.listdir('/proc/self/fd'):
    if int(name) > 2:
        try: os.close(int(name))
        except OSError: pass
os.chdir('/')
NULL = os.open('/dev/null', os.O_RDONLY | os.O_CLOEXEC)
DEFAULTS = [s for s in signal.valid_signals() if s not in (signal.SIGKILL, signal.SIGSTOP)]
# A new terminal's settings, as node-pty's fork makes them (Linux values): iflag ICRNL IXON IXANY
# IMAXBEL BRKINT IUTF8, oflag OPOST ONLCR, cflag CREAD CS8 HUPCL B38400, lflag ICANON ISIG IEXTEN
# ECHO ECHOE ECHOK ECHOKE ECHOCTL, and its control characters.
TERMINAL = [0o66402, 0o5, 0o2277, 0o105073, 0o17, 0o17,
            [bytes([c]) for c in (3, 28, 127, 21, 4, 0, 1, 0, 17, 19, 26, 255, 18, 15, 23, 22, 255)] + [b'\0'] * 15]
wake_r, wake_w = os.pipe()
os.set_blocking(wake_r, False); os.set_blocking(wake_w, False)
signal.set_wakeup_fd(wake_w)
signal.signal(signal.SIGCHLD, lambda *_: None)
kids, held = set(), {}

def reply(line):
    try:
        while line:
            line = line[os.write(1, line):]
    except OSError:
        os._exit(0)

def reap():
    while True:
        try: pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError: return
        if pid == 0: return
        if pid in kids:
            kids.discard(pid)
            reply(b'X %d %d\n' % (pid, status))

def write_to(path, text):
    fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
    try: os.write(fd, text)
    finally: os.close(fd)

def go_home(homes):
    for home in homes:
        try: write_to(home, b'0')
        except OSError as error:
            os.write(2, b'cannot leave a command cgroup for %s: %s\n' % (home, os.strerror(error.errno).encode()))
            os._exit(1)

def spawned(file, argv, env, stdio):
    if isinstance(stdio, bytes):
        # A terminal: opened by the child after its setsid, so it becomes its controlling tty.
        actions = [(os.POSIX_SPAWN_OPEN, 0, stdio, os.O_RDWR, 0), (os.POSIX_SPAWN_DUP2, 0, 1), (os.POSIX_SPAWN_DUP2, 0, 2)]
    else:
        actions = [(os.POSIX_SPAWN_DUP2, fd, target) for target, fd in enumerate(stdio)]
    extra = dict(file_actions=actions, setsid=True, setsigdef=DEFAULTS, setsigmask=())
    try:
        return os.posix_spawn(file, argv, env, **extra)
    except OSError as error:
        if error.errno != errno.ENOEXEC: raise
        return os.posix_spawn(b'/bin/sh', [b'/bin/sh', file] + argv[1:], env, **extra)

def forked(file, argv, env, stdio, groups):
    x_r, x_w = os.pipe()
    try:
        pid = os.fork()
    except OSError:
        os.close(x_r); os.close(x_w); raise
    if pid == 0:
        try:
            os.setsid()
            if isinstance(stdio, bytes):
                fd = os.open(stdio, os.O_RDWR)
                stdio = (fd, fd, fd)
            for target, fd in enumerate(stdio): os.dup2(fd, target)
            for group in groups:
                try: write_to(group, b'%d\n' % os.getpid())
                except OSError as error:
                    os.write(2, b'execd: cannot join the command cgroup %s: %s\n' % (group, os.strerror(error.errno).encode()))
                    os._exit(125)
            for s in (signal.SIGPIPE, signal.SIGXFSZ, signal.SIGCHLD, signal.SIGINT):
                signal.signal(s, signal.SIG_DFL)
            signal.pthread_sigmask(signal.SIG_SETMASK, [])
            try: os.execve(file, argv, env)
            except OSError as error:
                if error.errno != errno.ENOEXEC: raise
                os.execve(b'/bin/sh', [b'/bin/sh', file] + argv[1:], env)
        except OSError as error:
            os.write(x_w, b'%d' % error.errno)
        finally:
            os._exit(127)
    os.close(x_w)
    failed = b''
    while True:
        got = os.read(x_r, 64)
        if not got: break
        failed += got
    os.close(x_r)
    if failed:
        os.waitpid(pid, 0)
        raise OSError(int(failed), 'exec')
    return pid

def start(rid, stdin, cwd, file, *rest):
    lists, at = [], 0
    for _ in range(4):
        n = int(rest[at]) if at < len(rest) else 0
        lists.append(list(rest[at + 1:at + 1 + n])); at += 1 + n
    argv, env_list, groups, homes = lists
    env = {}
    for entry in env_list:
        name, _, value = entry.partition(b'=')
        env[name] = value
    terminal = stdin if stdin.startswith(b'/') else None
    if terminal is not None:
        if termios is None: return reply(b'F %s %d terminal\n' % (rid, errno.ENOSYS))
        try:
            fd = os.open(terminal, os.O_RDWR | os.O_NOCTTY | os.O_CLOEXEC)
            try: termios.tcsetattr(fd, termios.TCSANOW, TERMINAL)
            finally: os.close(fd)
        except Exception as error:
            return reply(b'F %s %d terminal\n' % (rid, getattr(error, 'errno', None) or errno.EINVAL))
    pipes = []
    try:
        for _ in range(0 if terminal else 3 if stdin == b'p' else 2): pipes.append(os.pipe())
    except OSError as error:
        for pair in pipes: os.close(pair[0]); os.close(pair[1])
        return reply(b'F %s %d pipe\n' % (rid, error.errno))
    (out_r, out_w), (err_r, err_w) = pipes[0] if pipes else (-1, -1), pipes[1] if pipes else (-1, -1)
    in_r, in_w = pipes[2] if stdin == b'p' else (NULL, -1)
    stage = b'exec'
    try:
        stage = b'chdir'
        os.chdir(cwd)
        stage = b'exec'
        stdio = terminal or (in_r, out_w, err_w)
        steps = [g[:-12] + b'tasks' for g in groups if g.endswith(b'/cgroup.procs')]
        if len(steps) == len(homes) == len(groups):
            entered = []
            try:
                for step in steps:
                    write_to(step, b'0'); entered.append(homes[len(entered)])
            except OSError:
                go_home(entered)
                pid = forked(file, argv, env, stdio, groups)
            else:
                try: pid = spawned(file, argv, env, stdio)
                finally: go_home(entered)
        else:
            pid = forked(file, argv, env, stdio, groups)
    except Exception as error:
        for pair in pipes: os.close(pair[0]); os.close(pair[1])
        code = getattr(error, 'errno', None) or errno.EINVAL
        return reply(b'F %s %d %s\n' % (rid, code, stage))
    finally:
        os.chdir('/')
    if pipes: os.close(out_w); os.close(err_w)
    if in_w >= 0: os.close(in_r)
    kids.add(pid)
    held[rid] = [fd for fd in (out_r, err_r, in_w) if fd >= 0]
    reply(b'S %s %d %d %d %d\n' % (rid, pid, out_r, err_r, in_w))

# Every attribute the spawns use, tried once on a program that cannot exist: a libc that lacks one
# (an old musl without POSIX_SPAWN_SETSID) fails here, and the server falls back to perl.
try: spawned(b'/nonexistent/execd-fork-server-probe', [b'probe'], {}, (NULL, NULL, NULL))
except FileNotFoundError: pass
except Exception: os._exit(3)
else: os._exit(3)
probe_r, probe_w = os.pipe()
held[b'probe'] = [probe_r, probe_w]
reply(b'P %d\n' % probe_r)
buf = bytearray()
while True:
    reap()
    ready = select.select([0, wake_r], [], [])[0]
    if wake_r in ready:
        try: os.read(wake_r, 4096)
        except BlockingIOError: pass
    if 0 not in ready: continue
    got = os.read(0, 1 << 18)
    if not got: os._exit(0)
    buf += got
    while len(buf) >= 4:
        size = int.from_bytes(buf[:4], 'big')
        if len(buf) < 4 + size: break
        fields = bytes(buf[4:4 + size]).split(b'\0')
        del buf[:4 + size]
        if fields[0] == b's': start(*fields[1:])
        elif fields[0] == b'r':
            for rid in fields[1:]:
                for fd in held.pop(rid, ()): os.close(fd)
`;
