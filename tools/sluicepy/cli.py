"""How the tools fail: one line naming the tool and what went wrong, a
non-zero exit status, and no Python traceback (the user did nothing wrong
with Python; they need to know which step failed and where to look).

    def main(argv): ... run_step([...], "tools/workload") ...
    if __name__ == "__main__":
        cli.main_wrapper("experiment", main, sys.argv[1:])

Set SLUICE_TRACEBACK=1 to get the traceback anyway (debugging the tools).
"""

import json
import os
import subprocess
import sys

EXIT_ERROR = 1
EXIT_INTERRUPTED = 130  # as a shell reports a command stopped by SIGINT


class ToolError(Exception):
    """A failure the user can act on; `code` is the exit status."""

    def __init__(self, message, code=EXIT_ERROR):
        super().__init__(message)
        self.code = code


def exit_text(rc):
    return "killed by signal %d" % -rc if rc < 0 else "exit %d" % rc


def show(cmd):
    print("+ " + " ".join(str(c) for c in cmd), flush=True)


def run_step(cmd, what=None, see="above", **kw):
    """Runs one step (a child program) and raises ToolError when it fails.
    The child has already said why; the line names the step and where its
    message is (`see`: "above", or a log file the output went to)."""
    cmd = [str(c) for c in cmd]
    what = what or os.path.basename(cmd[0])
    show(cmd)
    sys.stdout.flush()
    try:
        done = subprocess.run(cmd, **kw)
    except OSError as e:
        raise ToolError("cannot run %s (%s): %s" % (what, cmd[0], e.strerror or e))
    if done.returncode != 0:
        where = "see above" if see == "above" else "see %s" % see
        raise ToolError("%s failed (%s); %s" % (what, exit_text(done.returncode), where))
    return done


def load_json(path, what="JSON"):
    """A JSON file, or a ToolError that names it (json's own message does not)."""
    try:
        with open(path) as f:
            return json.load(f)
    except json.JSONDecodeError as e:
        raise ToolError("%s: not valid %s (%s)" % (path, what, e))


def load_yaml(path):
    import yaml
    try:
        with open(path) as f:
            return yaml.safe_load(f)
    except yaml.YAMLError as e:
        raise ToolError("%s: bad YAML: %s" % (path, one_line(e)))


def one_line(e):
    return "; ".join(s.strip() for s in str(e).splitlines() if s.strip())


def describe(e):
    """A one-line message for the exceptions a user can cause (missing or
    malformed input, a failing child); None for anything else (a bug)."""
    if isinstance(e, ToolError):
        return str(e)
    if isinstance(e, subprocess.CalledProcessError):
        cmd = e.cmd if isinstance(e.cmd, (list, tuple)) else str(e.cmd).split()
        return "%s failed (%s); see above" % (os.path.basename(str(cmd[0])),
                                               exit_text(e.returncode))
    if isinstance(e, subprocess.TimeoutExpired):
        cmd = e.cmd if isinstance(e.cmd, (list, tuple)) else str(e.cmd).split()
        return "%s timed out after %s s" % (os.path.basename(str(cmd[0])), e.timeout)
    if isinstance(e, ModuleNotFoundError) and e.name:
        return "Python module %r is missing (Debian: apt-get install python3-%s)" % (
            e.name, e.name.split(".")[0])
    if isinstance(e, OSError):
        if e.filename is not None:
            return "%s: %s" % (e.filename, e.strerror or e)
        return str(e)
    if isinstance(e, KeyError):
        key = e.args[0] if e.args else ""
        # A KeyError raised with a sentence is a message; a bare key is not.
        return key if isinstance(key, str) and " " in key else "missing key %r" % (key,)
    yaml = sys.modules.get("yaml")  # only tools that read YAML have it loaded
    if yaml is not None and isinstance(e, yaml.YAMLError):
        return "bad YAML: " + one_line(e)
    if isinstance(e, ValueError):
        return one_line(e)
    return None


def fail(prog, message):
    sys.stdout.flush()
    print("%s: %s" % (prog, message), file=sys.stderr, flush=True)


def main_wrapper(prog, main, *args):
    """Runs main(*args) and exits: with its return value (None = 0), or with
    one line on stderr and a non-zero status for a readable failure."""
    try:
        rc = main(*args)
    except KeyboardInterrupt:
        fail(prog, "interrupted")
        sys.exit(EXIT_INTERRUPTED)
    except Exception as e:  # noqa: BLE001 - classified by describe()
        message = describe(e)
        if message is None or os.environ.get("SLUICE_TRACEBACK"):
            raise
        fail(prog, message)
        sys.exit(e.code if isinstance(e, ToolError) else EXIT_ERROR)
    sys.exit(rc or 0)
