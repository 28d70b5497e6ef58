"""The names users depend on stay as they were: each set is discovered from
the running sluice and compared with a list committed in tests/interface/
(written by this test's --write mode from the code before the refactor that
moved code between files, so that a rename or a lost name shows here).

- metrics.txt: every metric family sluice serves on /metrics, its type and
  its sorted label names (not their values), scraped once traffic has flowed
  through the five mechanisms' fabrics of test_dashboards.py (sluice_config:
  PFC with TCD, BFC, Floodgate with dstPause, DIBS with a Flowtune edge) in
  real time.
- config_keys.txt: every key path the configuration loader accepts
  (`switches[].ports[].nic.mode`; list indexes as []), found black-box
  through `sluice -- --config FILE --check`: an unknown key zzqqxx_unknown
  in a map is refused with that map's allowed keys; each allowed key is
  then given {zzqqxx_unknown: 1} and [{zzqqxx_unknown: 1}], and where an
  allowed-keys list answers at its path it is a map or a list of maps, and
  is explored the same way (every probe of one depth in one file).
- summary_fields.txt: every key path of --summary-json (`switches[].ports[].
  rx_packets`; the keys of a port's `drops`, the reasons that dropped
  something, as drops.{reason}) over: the real-time run above; the exact-time
  fabrics of test_exact_time.py (tools/sluicepy/exact_fabrics.py: BFC + TCD
  with BFC NICs, Floodgate with dstPause and FG_SYNC, DIBS with RED, PFC with
  ECN); and a short exact-time run of transport hosts for every transport
  kind (tcp with Flowtune's allocator in the fabric and host pacing, dctcp
  with ECN, dcqcn with PFC and TCD, hpcc with INT and PFC, timely with PFC
  and TCD, bfc-nic with BFC, pfabric).

On a difference the test prints what was added and what was removed.

    /usr/bin/python3 tests/integration/test_interface_names.py SLUICE SRCDIR
    /usr/bin/python3 tests/integration/test_interface_names.py SLUICE SRCDIR --write

--write rewrites the three lists from what this sluice does (the test then
passes): only for an intended change of a name, committed with it.
"""

import json
import os
import re
import subprocess
import sys
import time

import yaml

import harness
from harness import check
from test_dashboards import sluice_config

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
from sluicepy import exact_fabrics  # noqa: E402

WRITE = "--write" in sys.argv[3:]
LISTS = ("metrics.txt", "config_keys.txt", "summary_fields.txt")
PROBE = "zzqqxx_unknown"


# ---------------------------------------------------------------- config keys

ALLOWED = re.compile(r"^[^\n]*:\d+: (\S+): unknown key \"" + PROBE + r"\"; allowed keys: (.*)$",
                     re.M)


def normalise(path):
    return re.sub(r"\[\d+\]", "[]", path)


def join(parent, key):
    return parent + "." + key if parent else key


def allowed_keys(binary, tmp, doc, calls):
    """{normalised map path: allowed keys} of every map where `sluice --check`
    refused the probe key in doc."""
    path = os.path.join(tmp, "probe-%d.yaml" % len(calls))
    with open(path, "w") as f:
        yaml.safe_dump(doc, f)
    r = subprocess.run([binary, "--", "--config", path, "--check"], capture_output=True,
                       text=True, timeout=60)
    calls.append(path)
    check(r.returncode != 0, f"sluice --check accepted the probe {path}:\n{r.stdout}")
    found = {}
    for where, keys in ALLOWED.findall(r.stderr):
        check(where.endswith(PROBE), f"{path}: refused key at {where}:\n{r.stderr}")
        found[normalise(where[:-len(PROBE)].rstrip("."))] = [k.strip() for k in keys.split(",")]
    return found


def config_keys(binary, tmp):
    """Every key path the loader accepts, sorted."""
    calls = []
    maps = allowed_keys(binary, tmp, {PROBE: 1}, calls)
    check("" in maps, "sluice --check did not list the top level's keys")
    kinds = {}  # key path -> "map" | "list" (of maps) | "scalar"
    while True:
        unknown = {join(m, k) for m, keys in maps.items() for k in keys} - set(kinds)
        if not unknown:
            break
        for probe in ({PROBE: 1}, [{PROBE: 1}]):
            def build(m):
                doc = {PROBE: 1}
                for k in maps[m]:
                    path = join(m, k)
                    if path in unknown:
                        doc[k] = probe
                    elif kinds.get(path) == "map":
                        doc[k] = build(path)
                    elif kinds.get(path) == "list":
                        doc[k] = [build(path + "[]")]
                return doc
            for m, keys in allowed_keys(binary, tmp, build(""), calls).items():
                check(maps.get(m, keys) == keys, f"{m}: allowed keys {maps.get(m)}, then {keys}")
                maps[m] = keys
        for path in unknown:
            kinds[path] = "map" if path in maps else "list" if path + "[]" in maps else "scalar"
    print(f"config keys: {len(maps)} maps, {len(kinds)} keys in {len(calls)} sluice --check runs")
    return sorted(kinds)


# ---------------------------------------------------------------- metrics

SUFFIXES = ("", "_bucket", "_sum", "_count")


def metric_families(text):
    """{family: (type, sorted label names)} of a Prometheus text scrape."""
    types = {}
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split(None, 3)
            types[name] = kind.strip()
    labels = {name: set() for name in types}
    for name, samples in harness.metric_samples(text).items():
        family = next((name[:len(name) - len(s)] for s in SUFFIXES
                       if name.endswith(s) and name[:len(name) - len(s)] in types), None)
        check(family is not None, f"metric {name} has no # TYPE line")
        for lab, _ in samples:
            labels[family].update(lab)
    return {name: (types[name], tuple(sorted(labels[name]))) for name in types}


def metric_lines(families):
    return sorted(f"{name} {kind} {','.join(labels) or '-'}"
                  for name, (kind, labels) in families.items())


def traffic_flowed(text):
    """Every far host received bytes and PFC, BFC and Floodgate sent frames."""
    s = harness.metric_samples(text)

    def some(name, **match):
        return sum(v for lab, v in s.get(name, []) if all(lab.get(k) == x
                                                           for k, x in match.items()))
    delivered = all(some("sluice_port_tx_bytes_total", switch=f"{n}_b", port="h1") > 0
                    for n in ("pfc", "bfc", "fg", "dibs"))
    return (delivered and some("sluice_pfc_frames_sent_total") > 0 and
            some("sluice_bfc_frames_sent_total") > 0 and
            some("sluice_floodgate_credit_sent_bytes_total") > 0)


def real_time_run(binary, tmp):
    """(metric lines, summary) of the dashboards' fabrics in real time."""
    config = sluice_config(tmp)
    sluice = harness.Sluice(binary, tmp, config, "names", duration=120)
    with sluice:
        text = sluice.metrics_text(timeout=30)
        deadline = time.monotonic() + 60
        while not traffic_flowed(text):
            check(time.monotonic() < deadline,
                  "no traffic through every fabric after 60 s\n" + sluice.logs())
            time.sleep(0.5)
            text = sluice.metrics_text()
        first = metric_families(text)
        time.sleep(1)
        families = metric_families(sluice.metrics_text())
        check(families == first, "the metric families changed between two scrapes: "
              f"{sorted(set(metric_lines(first)) ^ set(metric_lines(families)))}")
        sluice.stop(timeout=30)
        sluice.expect_clean_exit()
        summary = sluice.summary()
    print(f"metrics: {len(families)} families")
    return metric_lines(families), summary


# ---------------------------------------------------------------- summary

def summary_paths(node, path="", out=None):
    """Every key path of a summary, list indexes as [] and drop reasons as
    drops.{reason}."""
    out = set() if out is None else out
    if isinstance(node, dict):
        for k, v in node.items():
            p = path + ".{reason}" if path.endswith(".drops") or path == "drops" else join(path, k)
            out.add(p)
            summary_paths(v, p, out)
    elif isinstance(node, list):
        for v in node:
            summary_paths(v, path + "[]", out)
    return out


def exact_runs(binary, srcdir, tmp):
    """The summaries of test_exact_time's fabrics, seed 1."""
    workload = os.path.join(tmp, "workload")
    exact_fabrics.make_workload(srcdir, workload)
    summaries = []
    for kind in exact_fabrics.KINDS:
        d = exact_fabrics.prepare_run(tmp, workload, exact_fabrics.fabric(srcdir, kind),
                                      "exact-" + kind.replace("+", "-"))
        prefix = f"sluice-it-names-{os.getpid()}-{kind.replace('+', '-')}"
        r = subprocess.run(exact_fabrics.command(binary, prefix), cwd=d, capture_output=True,
                           text=True, env=exact_fabrics.run_env(), timeout=300)
        check(r.returncode == 0, f"{kind}: sluice exited {r.returncode}:\n{r.stdout[-3000:]}"
              f"{r.stderr[-3000:]}")
        summaries.append(read_summary(os.path.join(d, "summary.json"), kind))
    return summaries


def read_summary(path, name):
    try:
        with open(path) as f:
            summary = json.load(f)
    except (OSError, ValueError) as e:
        raise harness.TestFailure(f"{name}: no readable summary ({e})")
    harness.check_exact_clock(summary, name)
    return summary


# Transport kind -> (switch sections, transport parameters, top-level extra).
TRANSPORTS = {
    "tcp": ({"flowtune": {"pace_at": "host"}}, {}, {"flowtune_allocator": {}}),
    "dctcp": ({"ecn": {"mode": "step", "k": "20KB"}}, {}, {}),
    "dcqcn": ({"ecn": {"mode": "step", "k": "20KB"}, "pfc": {"mode": "pfc", "xoff": "50KB"},
               "tcd": {}}, {"dcqcn": {"ue_aware": True}}, {}),
    "hpcc": ({"int": {"enabled": True}, "pfc": {"mode": "pfc", "xoff": "50KB"}}, {}, {}),
    "timely": ({"pfc": {"mode": "pfc", "xoff": "50KB"}, "tcd": {"q_th": "20KB"}},
               {"timely": {"ue_aware": True}}, {}),
    "bfc-nic": ({"bfc": {}}, {}, {}),
    "pfabric": ({}, {}, {}),
}
FLOWS = ((0, 2, 200_000, 0.0), (1, 2, 200_000, 0.0), (3, 0, 50_000, 0.00001))


def transport_config(tmp, kind):
    """Two switches, s1 (hosts h0, h1) and s2 (h2, h3), a 10 Gb/s link
    between; h0 and h1 send to h2, h3 to h0."""
    sections, params, top = TRANSPORTS[kind]
    name = "transport-" + kind
    switches = []
    for s, hosts, peer in ((1, (0, 1), 2), (2, (2, 3), 1)):
        ports = []
        for i in hosts:
            p = harness.replay_host(f"h{i}", f"02:00:00:00:1{s}:{i:02x}",
                                    f"02:00:00:00:2{s}:{i:02x}", f"10.0.{i}.1/24", "10Gbps",
                                    tx=f"{name}.h{i}.pcap",
                                    nic={"mode": "bfc"} if kind == "bfc-nic" else None)
            p["peer_ip"] = f"10.0.{i}.2"
            p["delay"] = "1us"
            ports.append(p)
        ports.append({"name": "u", "role": "switch", "rate": "10Gbps", "delay": "1us",
                      "link": f"s{peer}/u"})
        remote = "10.0.2.0/23" if s == 1 else "10.0.0.0/23"
        switches.append(harness.switch(f"s{s}", ports, [harness.route(remote, "u")],
                                       buffer={"size": "1MB"}, **sections))
    path = harness.write_config(os.path.join(tmp, name + ".yaml"), switches,
                                clock={"mode": "exact"})
    with open(path) as f:
        doc = yaml.safe_load(f)
    doc["metrics"] = {"enabled": False}
    doc["seed"] = 1
    doc["transport"] = dict(params, kind=kind, flows=name + ".flows.csv",
                            completions=name + ".completions.csv", base_rtt="10us")
    doc.update(top)
    with open(path, "w") as f:
        yaml.safe_dump(doc, f, sort_keys=False)
    with open(os.path.join(tmp, name + ".flows.csv"), "w") as f:
        f.write("flow_id,src,dst,src_ip,dst_ip,size,packets,arrival_time,start_time,end_time,"
                "is_incast\n")
        for fid, (src, dst, size, t) in enumerate(FLOWS, 1):
            f.write(f"{fid},h{src},h{dst},10.0.{src}.2,10.0.{dst}.2,{size},0,{t:.9f},0,0,0\n")
    return path


def transport_runs(binary, tmp):
    summaries = []
    for kind in TRANSPORTS:
        config = transport_config(tmp, kind)
        s = harness.Sluice(binary, tmp, config, "transport-" + kind, duration=0.06,
                           metrics=False)
        s.start()
        s.wait(timeout=120)
        s.expect_clean_exit()
        summary = s.summary()
        t = summary.get("transport", {})
        check(t.get("kind") == kind and t.get("finished") == len(FLOWS),
              f"{kind}: the transport hosts did not finish their flows: {t}\n" + s.logs())
        summaries.append(summary)
    return summaries


# ---------------------------------------------------------------- lists

def compare(srcdir, name, actual):
    """Compares (or with --write, writes) tests/interface/NAME; returns a
    description of the difference, or None."""
    path = os.path.join(srcdir, "tests", "interface", name)
    if WRITE:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write("\n".join(sorted(actual)) + "\n")
        print(f"wrote {path}: {len(actual)} lines")
        return None
    try:
        with open(path) as f:
            expected = {line.strip() for line in f if line.strip() and not line.startswith("#")}
    except OSError as e:
        return f"{path}: {e.strerror}"
    added, removed = sorted(set(actual) - expected), sorted(expected - set(actual))
    if not added and not removed:
        print(f"{name}: {len(expected)} names as committed")
        return None
    return (f"{path} ({len(expected)} names) differs from what sluice does now:\n" +
            "".join(f"  added:   {x}\n" for x in added) +
            "".join(f"  removed: {x}\n" for x in removed))


def test(binary, srcdir):
    with harness.TempDir("interface-names") as tmp:
        t0 = time.monotonic()
        keys = config_keys(binary, tmp)
        t1 = time.monotonic()
        metrics, rt_summary = real_time_run(binary, tmp)
        t2 = time.monotonic()
        summaries = [rt_summary] + exact_runs(binary, srcdir, tmp)
        t3 = time.monotonic()
        summaries += transport_runs(binary, tmp)
        print(f"wall time: config keys {t1 - t0:.1f} s, real-time run {t2 - t1:.1f} s, "
              f"exact-time fabrics {t3 - t2:.1f} s, transport runs {time.monotonic() - t3:.1f} s")
        fields = set()
        for s in summaries:
            summary_paths(s, out=fields)
        problems = [p for p in (compare(srcdir, "metrics.txt", metrics),
                                compare(srcdir, "config_keys.txt", keys),
                                compare(srcdir, "summary_fields.txt", fields)) if p]
        check(not problems, "names users depend on changed (a rename or a lost name is a "
              "regression; an intended change updates the list with this test's --write, "
              "in the same commit):\n" + "\n".join(problems))


if __name__ == "__main__":
    if WRITE:
        sys.argv.remove("--write")
    harness.main(test)
