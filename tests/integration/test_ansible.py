#!/usr/bin/python3
"""deploy/ansible/site.yml sets up a multi-server testbed from one topology
(docs/deploy.md, "Multi-server testbed with Ansible"). Here both "servers"
of deploy/ansible/topology.example.yml (sw-a, sw-b) are this machine
(connection local), each with its own staging root (sluice_root), NIC
binding, hugepages, package installs and systemctl skipped.

- `ansible-playbook --syntax-check` accepts the playbook (and rejects a copy
  with a misspelt module option, so the check looks at it); ansible-lint
  (Debian's package) passes on deploy/ansible.
- The playbook run succeeds. Under each server's root: the installed
  programs (they run), units, hugepages.sh, docs and the unit drop-in with
  the topology's lcores; the rendered sluice.yaml passes `sluice --check`
  and holds exactly the switches, ports (host ports, internal links, NIC
  ports with the peer's address) and routes the topology gives that server.
  sw-a's root also holds the Prometheus configuration: one target per
  server, job "sluice", the rules of deploy/prometheus/, and
  `promtool check config` accepts it.
- A topology whose route names a missing port makes the playbook fail (the
  rendered file is checked with the installed sluice before it is written).
"""

import json
import os
import re
import shutil
import subprocess

import yaml

import harness
from harness import check, check_eq

SERVERS = {"sw-a": "127.0.0.1", "sw-b": "127.0.0.2"}


def apt_install(*packages):
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    for cmd in (["apt-get", "update", "-q"],
                ["apt-get", "install", "-y", "-q", "--no-install-recommends", *packages]):
        r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900)
        check(r.returncode == 0, f"{' '.join(cmd)} failed:\n{r.stdout[-2000:]}{r.stderr[-2000:]}")


def ensure_tools():
    """ansible, ansible-lint and promtool, from Debian 12's packages (as tools/setup does)."""
    wanted = {"ansible-playbook": "ansible", "ansible-lint": "ansible-lint", "promtool": "prometheus"}
    missing = sorted({pkg for prog, pkg in wanted.items() if not shutil.which(prog)})
    if missing:
        apt_install(*missing)
    for prog in wanted:
        check(shutil.which(prog), f"{prog} not on PATH after installing {missing}")


def run(cmd, cwd, env, timeout=600):
    r = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    return r.returncode, r.stdout + r.stderr


def build_options(builddir):
    r = subprocess.run(["meson", "introspect", "--buildoptions", builddir],
                       capture_output=True, text=True, check=True)
    return {o["name"]: o["value"] for o in json.loads(r.stdout)}


def write_inventory(path, roots, builddir):
    servers = {name: {"ansible_host": addr, "sluice_root": roots[name]}
               for name, addr in SERVERS.items()}
    inventory = {"all": {
        "vars": {
            "ansible_connection": "local",
            "ansible_python_interpreter": "/usr/bin/python3",
            "sluice_build_dir": builddir,
            "sluice_install_packages": False,
            "sluice_reserve_hugepages": False,
            "sluice_bind_nics": False,
            "sluice_manage_services": False,
        },
        "children": {
            "sluice_servers": {"hosts": servers},
            "sluice_prometheus": {"hosts": {"sw-a": None}},
        },
    }}
    with open(path, "w") as f:
        yaml.safe_dump(inventory, f, sort_keys=False)


def expected_switches(topo, server):
    """{switch: {"ports": {name: {key: value}}, "routes": [...]}} the topology gives server."""
    where = {sw["name"]: sw["server"] for sw in topo["switches"]}
    out = {}
    for sw in topo["switches"]:
        if sw["server"] != server:
            continue
        ports = {}
        for h in topo.get("hosts", []):
            if h["switch"] == sw["name"]:
                ports[h["port"]] = {"device": h["device"], "role": "host", "ipv4": h["ipv4"],
                                    "peer_ip": h["host_ip"]}
        for link in topo.get("links", []):
            for i in (0, 1):
                end, other = link["ends"][i], link["ends"][1 - i]
                if end["switch"] != sw["name"]:
                    continue
                p = {"role": "switch"}
                if where[other["switch"]] == server:
                    p["link"] = f"{other['switch']}/{other['port']}"
                    check("device" not in end, f"internal link end {end} has a device")
                else:
                    p["device"] = end["device"]
                    p["ipv4"] = end["ipv4"]
                    p["peer_ip"] = other["ipv4"].split("/")[0]
                p.update(link.get("options", {}))
                ports[end["port"]] = p
        out[sw["name"]] = {"ports": ports, "routes": sw.get("routes", [])}
    return out


def check_config(binary, server, path, topo):
    check(os.path.isfile(path), f"{server}: no configuration at {path}")
    with open(path) as f:
        config = yaml.safe_load(f)
    want = expected_switches(topo, server)
    check(want, f"the example topology gives {server} no switch")
    got = {sw["name"]: sw for sw in config["switches"]}
    check_eq(sorted(got), sorted(want), f"{server}: switches in {path}")
    nports = 0
    for name, sw in want.items():
        ports = {p["name"]: p for p in got[name]["ports"]}
        check_eq(sorted(ports), sorted(sw["ports"]), f"{server}: ports of {name}")
        for pname, keys in sw["ports"].items():
            for key, value in keys.items():
                check_eq(ports[pname].get(key), value, f"{server}: {name}/{pname} {key}")
            check_eq(str(ports[pname].get("rate")), topo["rate"], f"{server}: {name}/{pname} rate")
            if "link" in keys:
                check("device" not in ports[pname], f"{server}: internal link {name}/{pname} has a device")
        check_eq(got[name].get("routes", []), sw["routes"], f"{server}: routes of {name}")
        for key, value in next(s for s in topo["switches"] if s["name"] == name)["options"].items():
            check_eq(got[name].get(key), value, f"{server}: {name} option {key}")
        nports += len(sw["ports"])
    check_eq(config["metrics"]["address"], topo["servers"][server]["metrics_address"],
             f"{server}: metrics address")

    r = subprocess.run([binary, "--no-huge", "-m", "1024", "--no-pci", "-l", "0,1",
                        "--file-prefix", f"sluice-it-ansible-{os.getpid()}",
                        "--", "--config", path, "--check"],
                       capture_output=True, text=True, timeout=60)
    out = r.stdout + r.stderr
    check(r.returncode == 0, f"{server}: sluice --check {path}: exit {r.returncode}\n{out}")
    m = re.search(r"config OK: (\d+) switch\w*, (\d+) ports", out)
    check(m, f"{server}: no 'config OK' from sluice --check:\n{out}")
    check_eq((int(m.group(1)), int(m.group(2))), (len(want), nports),
             f"{server}: switches and ports sluice --check counted")


def check_installed(server, root, options, topo):
    def staged(path):
        return os.path.join(root, path.lstrip("/"))

    prefix = options["prefix"]
    for prog in ("bin/sluice", "bin/sluice-allocator", "share/sluice/hugepages.sh"):
        path = staged(f"{prefix}/{prog}")
        check(os.path.isfile(path) and os.access(path, os.X_OK),
              f"{server}: {prefix}/{prog} is not an executable file under {root}")
    for f in ("lib/systemd/system/sluice.service", "lib/systemd/system/sluice-allocator.service",
              "share/doc/sluice/deploy.md", "share/sluice/sluice.yaml"):
        check(os.path.isfile(staged(f"{prefix}/{f}")), f"{server}: {prefix}/{f} not installed under {root}")
    r = subprocess.run([staged(f"{prefix}/bin/sluice"), "--version"], capture_output=True, text=True,
                       timeout=30)
    check(r.returncode == 0 and r.stdout.startswith("sluice "),
          f"{server}: installed sluice --version: {r.returncode} {r.stdout}{r.stderr}")

    dropin = staged("/etc/systemd/system/sluice.service.d/ansible.conf")
    check(os.path.isfile(dropin), f"{server}: no unit drop-in at {dropin}")
    with open(dropin) as f:
        text = f.read()
    lcores = ",".join(str(c) for c in topo["servers"][server]["lcores"])
    sysconf = options["sysconfdir"] if options["sysconfdir"].startswith("/") else \
        f"{prefix}/{options['sysconfdir']}"
    starts = [line for line in text.splitlines() if line.startswith("ExecStart=")]
    check_eq(starts[0], "ExecStart=", f"{server}: drop-in clears ExecStart first")
    check_eq(starts[1], f"ExecStart={prefix}/bin/sluice -l {lcores} --file-prefix sluice -- "
             f"--config {sysconf}/sluice/sluice.yaml --stats-interval 0", f"{server}: drop-in ExecStart")
    check(f"ExecStartPre={prefix}/share/sluice/hugepages.sh 1024" in text,
          f"{server}: drop-in does not reserve the hugepages:\n{text}")
    # sluice_bind_nics: false leaves the NICs alone, now and at start.
    check("dpdk-devbind" not in text, f"{server}: NIC binding in the drop-in although skipped:\n{text}")
    check(not os.path.exists(staged("/etc/modules-load.d/vfio-pci.conf")),
          f"{server}: vfio-pci.conf written although NIC binding is skipped")
    return staged(f"{sysconf}/sluice/sluice.yaml")


def check_prometheus(root, srcdir, tmp):
    path = os.path.join(root, "etc/prometheus/prometheus.yml")
    check(os.path.isfile(path), f"no Prometheus configuration at {path}")
    with open(path) as f:
        prom = yaml.safe_load(f)
    jobs = {j["job_name"]: j for j in prom["scrape_configs"]}
    check_eq(sorted(jobs), ["sluice"], "Prometheus jobs")
    targets = {}
    for sc in jobs["sluice"]["static_configs"]:
        for t in sc["targets"]:
            targets[t] = sc.get("labels", {}).get("server")
    check_eq(targets, {f"{addr}:9100": name for name, addr in SERVERS.items()},
             "Prometheus targets and their server labels")
    check_eq(prom["rule_files"], ["sluice/rules.yml"], "Prometheus rule files")
    with open(os.path.join(root, "etc/prometheus/sluice/rules.yml")) as f, \
            open(os.path.join(srcdir, "deploy/prometheus/rules.yml")) as g:
        check(f.read() == g.read(), "installed rules differ from deploy/prometheus/rules.yml")
    r = subprocess.run(["promtool", "check", "config", path], capture_output=True, text=True,
                       timeout=120)
    check(r.returncode == 0 and "SUCCESS" in r.stdout + r.stderr and "rules found" in r.stdout + r.stderr,
          f"promtool check config {path}: exit {r.returncode}\n{r.stdout}{r.stderr}")


def test(binary, srcdir):
    builddir = os.path.dirname(os.path.dirname(binary))
    check(os.path.isfile(os.path.join(builddir, "build.ninja")),
          f"{builddir} (from {binary}) is not a meson build directory")
    ensure_tools()
    options = build_options(builddir)
    ansdir = os.path.join(srcdir, "deploy", "ansible")
    topology_file = os.path.join(ansdir, "topology.example.yml")
    with open(topology_file) as f:
        topo = yaml.safe_load(f)["sluice_topology"]
    check_eq(sorted(topo["servers"]), sorted(SERVERS), "servers of the example topology")

    with harness.TempDir("ansible") as tmp:
        env = dict(os.environ, ANSIBLE_NOCOLOR="1", ANSIBLE_RETRY_FILES_ENABLED="0",
                   ANSIBLE_LOCAL_TEMP=os.path.join(tmp, "ansible-local"),
                   ANSIBLE_REMOTE_TEMP=os.path.join(tmp, "ansible-remote"),
                   ANSIBLE_HOST_KEY_CHECKING="0", TMPDIR=tmp)
        roots = {name: os.path.join(tmp, f"root-{name}") for name in SERVERS}
        inventory = os.path.join(tmp, "inventory.yml")
        write_inventory(inventory, roots, builddir)
        playbook = ["ansible-playbook", "-i", inventory, os.path.join(ansdir, "site.yml"),
                    "-e", f"sluice_topology_file={topology_file}"]

        rc, out = run(playbook + ["--syntax-check"], tmp, env, 120)
        check(rc == 0 and "playbook:" in out, f"ansible-playbook --syntax-check: exit {rc}\n{out}")
        # The syntax check does fail on a broken playbook.
        broken = os.path.join(tmp, "broken")
        shutil.copytree(ansdir, broken)
        with open(os.path.join(broken, "site.yml"), "a") as f:
            f.write("    - sluice\n  not_a_play_keyword: true\n")
        rc, out = run(["ansible-playbook", "-i", inventory, os.path.join(broken, "site.yml"),
                       "-e", f"sluice_topology_file={topology_file}", "--syntax-check"], tmp, env, 120)
        check(rc != 0, f"--syntax-check accepted a broken site.yml:\n{out}")

        rc, out = run(["ansible-lint", "--offline", "--nocolor", "site.yml"], ansdir, env, 300)
        check(rc == 0, f"ansible-lint deploy/ansible: exit {rc}\n{out}")

        rc, out = run(playbook, tmp, env, 600)
        check(rc == 0, f"ansible-playbook site.yml: exit {rc}\n{out}")
        for name in SERVERS:
            check(re.search(rf"^{re.escape(name)}\s*:\s*ok=\d+\s+changed=\d+\s+unreachable=0\s+failed=0",
                            out, re.M), f"no clean recap for {name}:\n{out}")

        configs = {}
        for name, root in roots.items():
            configs[name] = check_installed(name, root, options, topo)
            check_config(binary, name, configs[name], topo)
        check_prometheus(roots["sw-a"], srcdir, tmp)
        check(not os.path.exists(os.path.join(roots["sw-b"], "etc/prometheus")),
              "Prometheus configured on sw-b, which is not in group sluice_prometheus")

        # A topology sluice refuses (a route through a port sw-b does not
        # have) stops the playbook before the file is written.
        bad = dict(topo, switches=[dict(sw, routes=[{"prefix": "0.0.0.0/0", "port": "nope"}])
                                   if sw["name"] == "leaf2" else sw for sw in topo["switches"]])
        bad_file = os.path.join(tmp, "bad-topology.yml")
        with open(bad_file, "w") as f:
            yaml.safe_dump({"sluice_topology": bad}, f, sort_keys=False)
        with open(configs["sw-b"]) as f:
            before = f.read()
        rc, out = run(playbook[:-1] + [f"sluice_topology_file={bad_file}", "--limit", "sw-b"],
                      tmp, env, 600)
        check(rc != 0 and "nope" in out,
              f"the playbook accepted a route through a missing port: exit {rc}\n{out}")
        with open(configs["sw-b"]) as f:
            check_eq(f.read(), before, "sw-b's sluice.yaml after the refused topology")


if __name__ == "__main__":
    harness.main(test)
