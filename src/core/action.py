# Bot Screen action runner: carries out one agent action inside the sandbox so that the extension
# can stop it at once (a person took control), in the sandbox itself and not only its exec client.
# Usage: python3 -c <this> RELEASE_ARGV... -- ACTION_ARGV...
# The action runs in a process group of its own. Any byte on stdin, or its end (the extension
# closes it; the exec client died), kills that whole group with SIGKILL at once, then runs
# RELEASE_ARGV (xdotool keyup/mouseup), so no key or button the killed action held stays down.
# Exit status: the action's own (128+N for signal N), or 124 when it was stopped.
import os, signal, subprocess, sys, threading

STOPPED = 124
split = sys.argv.index("--", 1)
release, action = sys.argv[1:split], sys.argv[split + 1:]
child = subprocess.Popen(action, stdin=subprocess.DEVNULL, start_new_session=True)
lock = threading.Lock()
state = {"exited": False, "stopped": False}


def watch():
    try:
        os.read(0, 1)
    except OSError:
        pass
    with lock:
        # Never signal a group whose leader was reaped: its id may belong to someone else by now.
        if not state["exited"]:
            state["stopped"] = True
            try:
                os.killpg(child.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


threading.Thread(target=watch, daemon=True).start()
# Wait without reaping, so the group id stays ours until the watcher can no longer use it.
os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)
with lock:
    state["exited"] = True
code = child.wait()
sys.stdout.flush()
if state["stopped"]:
    subprocess.run(release, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os._exit(STOPPED)
os._exit(code if code >= 0 else 128 - code)
