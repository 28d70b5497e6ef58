#!/usr/bin/python3
"""`meson install` makes a server deployment: `meson install --destdir STAGING`
from the build directory installs sluice, sluice-allocator, the systemd units,
the hugepage script, the example configuration and the docs. Every path the
installed units name (ExecStartPre and ExecStart programs, the --config file,
Documentation= files) exists under STAGING, the programs are executable, the
installed sluice accepts the installed configuration with --check, and
`systemd-analyze verify --root=STAGING` accepts both units (and rejects the
sluice unit once its binary is gone, so the verification does look inside
STAGING). A second install keeps an edited configuration."""

import json
import os
import re
import shlex
import shutil
import subprocess

import harness
from harness import check, check_eq

UNITS = ("sluice.service", "sluice-allocator.service")


def ensure_systemd_analyze():
    """systemd-analyze comes with Debian's systemd package; install it if missing."""
    if shutil.which("systemd-analyze"):
        return
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    subprocess.run(["apt-get", "update", "-q"], check=True, env=env)
    subprocess.run(["apt-get", "install", "-y", "-q", "--no-install-recommends", "systemd"],
                   check=True, env=env)
    check(shutil.which("systemd-analyze"), "systemd-analyze still missing after installing systemd")


def meson_install(builddir, staging):
    r = subprocess.run(["meson", "install", "-C", builddir, "--no-rebuild", "--quiet",
                        "--destdir", staging], capture_output=True, text=True, timeout=300)
    check_eq(r.returncode, 0, f"meson install --destdir {staging} exit status "
             f"(stdout:\n{r.stdout}\nstderr:\n{r.stderr})")
    return r.stdout + r.stderr


def build_option(builddir, name):
    r = subprocess.run(["meson", "introspect", "--buildoptions", builddir],
                       capture_output=True, text=True, check=True)
    for opt in json.loads(r.stdout):
        if opt["name"] == name:
            return opt["value"]
    raise harness.TestFailure(f"no build option {name}")


def unit_entries(path):
    """[(key, value)] of a unit file's assignments, in order."""
    entries = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line or line[0] in "#;[" or "=" not in line:
                continue
            key, _, value = line.partition("=")
            entries.append((key.strip(), value.strip()))
    return entries


def staged(staging, path):
    check(os.path.isabs(path), f"unit path {path!r} is not absolute")
    return os.path.join(staging, path.lstrip("/"))


def exec_argv(value):
    argv = shlex.split(value)
    argv[0] = argv[0].lstrip("-@+!:")  # systemd's command prefixes
    return argv


def check_unit_paths(staging, unit_path):
    """Checks the paths a unit names; returns {key: [argv...]} of its Exec lines."""
    execs = {}
    name = os.path.basename(unit_path)
    for key, value in unit_entries(unit_path):
        if key.startswith("Exec"):
            argv = exec_argv(value)
            execs.setdefault(key, []).append(argv)
            program = staged(staging, argv[0])
            check(os.path.isfile(program) and os.access(program, os.X_OK),
                  f"{name}: {key} program {argv[0]} is not an executable file under {staging}")
            check("@" not in value, f"{name}: unsubstituted placeholder in {key}={value}")
        elif key == "Documentation":
            for uri in value.split():
                check(uri.startswith("file:"), f"{name}: Documentation {uri} is not a file: URI")
                doc = staged(staging, uri[len("file:"):])
                check(os.path.isfile(doc), f"{name}: Documentation {uri} not installed under {staging}")
    check("ExecStart" in execs, f"{name}: no ExecStart")
    return execs


def systemd_verify(staging, *units):
    r = subprocess.run(["systemd-analyze", "verify", f"--root={staging}", *units],
                       capture_output=True, text=True, timeout=120)
    return r.returncode, r.stdout + r.stderr


def test(binary, srcdir):
    builddir = os.path.dirname(os.path.dirname(binary))
    check(os.path.isfile(os.path.join(builddir, "build.ninja")),
          f"{builddir} (from {binary}) is not a meson build directory")
    ensure_systemd_analyze()
    sysconfdir = os.path.join(build_option(builddir, "prefix"), build_option(builddir, "sysconfdir"))

    with harness.TempDir("install") as tmp:
        staging = os.path.join(tmp, "root")
        out = meson_install(builddir, staging)

        units = {}
        for dirpath, _, files in os.walk(staging):
            for f in files:
                if f in UNITS and dirpath.endswith("/systemd/system"):
                    units[f] = os.path.join(dirpath, f)
        check_eq(sorted(units), sorted(UNITS), f"units installed under {staging}")

        execs = {name: check_unit_paths(staging, path) for name, path in units.items()}

        # The sluice unit: hugepages first, then the installed sluice with the
        # installed configuration.
        pre = execs["sluice.service"].get("ExecStartPre", [])
        check(any(os.path.basename(a[0]) == "hugepages.sh" for a in pre),
              f"sluice.service runs no hugepages.sh before starting: {pre}")
        (start,) = execs["sluice.service"]["ExecStart"]
        check_eq(os.path.basename(start[0]), "sluice", "sluice.service program")
        check("--" in start and "--config" in start[start.index("--"):],
              f"sluice.service passes no --config after --: {start}")
        config = start[start.index("--config") + 1]
        check_eq(config, os.path.join(sysconfdir, "sluice", "sluice.yaml"),
                 "sluice.service configuration path")
        staged_config = staged(staging, config)
        check(os.path.isfile(staged_config), f"configuration {config} not installed under {staging}")
        (alloc,) = execs["sluice-allocator.service"]["ExecStart"]
        check_eq(os.path.basename(alloc[0]), "sluice-allocator", "sluice-allocator.service program")

        # Both programs run from where they were installed.
        staged_sluice = staged(staging, start[0])
        r = subprocess.run([staged_sluice, "--version"], capture_output=True, text=True, timeout=30)
        check(r.returncode == 0 and r.stdout.startswith("sluice "),
              f"installed sluice --version: {r.returncode} {r.stdout}{r.stderr}")
        r = subprocess.run([staged(staging, alloc[0]), "--help"], capture_output=True, text=True,
                           timeout=30)
        check(r.returncode == 0 and "usage: sluice-allocator" in r.stdout,
              f"installed sluice-allocator --help: {r.returncode} {r.stdout}{r.stderr}")

        # The installed example configuration passes --check with the installed binary.
        r = subprocess.run([staged_sluice, "--no-huge", "-m", "1024", "--no-pci", "-l", "0,1",
                            "--file-prefix", f"sluice-it-install-{os.getpid()}",
                            "--", "--config", staged_config, "--check"],
                           capture_output=True, text=True, timeout=60)
        check(r.returncode == 0 and re.search(r"config OK: 1 switch", r.stdout + r.stderr),
              f"installed sluice --check of the installed configuration: exit {r.returncode}\n"
              f"{r.stdout}{r.stderr}")

        # The docs the units point at, and the guide the README points at.
        docdir = os.path.dirname(staged(staging, [u for k, u in unit_entries(units["sluice.service"])
                                                  if k == "Documentation"][0].split()[0][5:]))
        for doc in ("deploy.md", "configuration.md", "architecture.md",
                    "mechanisms/flowtune.md", "README.md", "LICENSE"):
            check(os.path.isfile(os.path.join(docdir, doc)), f"{doc} not installed in {docdir}")

        # A reinstall keeps an operator's configuration.
        with open(staged_config, "a") as f:
            f.write("# edited by the operator\n")
        meson_install(builddir, staging)
        with open(staged_config) as f:
            check("# edited by the operator" in f.read(),
                  f"a second meson install overwrote {config}:\n{out}")

        # systemd-analyze verify with STAGING as the root: it finds the units
        # in systemd's search path there and checks their programs there.
        # systemd's own units (sysinit.target...) come from this machine.
        system_units = "/usr/lib/systemd/system"
        check(os.path.isfile(os.path.join(system_units, "multi-user.target")),
              f"no systemd units in {system_units}")
        dest = staged(staging, system_units)
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        shutil.copytree(system_units, dest, symlinks=True, dirs_exist_ok=True)
        rc, out = systemd_verify(staging, *UNITS)
        check(rc == 0, f"systemd-analyze verify --root={staging} {' '.join(UNITS)}: exit {rc}\n{out}")
        for unit in UNITS:
            check(unit not in out, f"systemd-analyze verify complains about {unit}:\n{out}")

        # The verification does look inside STAGING: without the binary it fails.
        os.rename(staged_sluice, staged_sluice + ".away")
        rc, out = systemd_verify(staging, "sluice.service")
        check(rc != 0 and "not executable" in out,
              f"systemd-analyze verify passed sluice.service without {start[0]}: exit {rc}\n{out}")


if __name__ == "__main__":
    harness.main(test)
