"""The Grafana dashboard and the Prometheus rules under deploy/
(docs/dashboards.md) against a real Prometheus scraping a real sluice.

- `promtool check rules` on deploy/prometheus/rules.yml, and `promtool test
  rules` on deploy/prometheus/rules_test.yml, which must show every alert of
  the rules file both firing and silent; a copy of the rules with every
  alert threshold moved must fail those unit tests (so they test something).
- deploy/grafana/sluice.json is a dashboard model with a Prometheus data
  source variable that every panel and target uses.
- sluice runs five small fabrics in one process, one per mechanism (PFC with
  TCD, BFC, Floodgate with dstPause, DIBS with Flowtune on its edge switch),
  each a host replaying traffic into a two-switch line whose far host port
  is slower, so queues, pauses and credits happen. Prometheus scrapes it
  every second with the rules loaded. After some scrapes, every dashboard
  variable's label_values() must list values, and every target of every
  panel (variables replaced by all their values, $__rate_interval by 10s)
  must answer without error and with at least one series; every recording
  rule must have produced series and every rule group must be healthy.
- Prometheus and sluice are stopped by their PIDs within bounded time.
"""

import copy
import json
import os
import re
import shutil
import signal
import subprocess
import time
import urllib.parse
import urllib.request

import yaml

import harness
from harness import TestFailure, check

RATE_INTERVAL = "10s"
SCRAPES_WANTED = 12


# ---------------------------------------------------------------- tools

def ensure_prometheus():
    """prometheus and promtool, installed with apt when missing (as tools/setup does)."""
    if shutil.which("prometheus") and shutil.which("promtool"):
        return
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    for cmd in (["apt-get", "update", "-q"],
                ["apt-get", "install", "-y", "-q", "--no-install-recommends", "prometheus"]):
        r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
        check(r.returncode == 0, f"{' '.join(cmd)} failed:\n{r.stdout[-2000:]}{r.stderr[-2000:]}")
    check(shutil.which("prometheus") and shutil.which("promtool"),
          "prometheus installed but prometheus/promtool not on PATH")


def promtool(*cmd, cwd=None):
    return subprocess.run(["promtool", *cmd], capture_output=True, text=True, timeout=120,
                          cwd=cwd)


# ---------------------------------------------------------------- rules

def check_rules(srcdir, tmp):
    prom_dir = os.path.join(srcdir, "deploy", "prometheus")
    rules_path = os.path.join(prom_dir, "rules.yml")
    r = promtool("check", "rules", rules_path)
    check(r.returncode == 0, f"promtool check rules failed:\n{r.stdout}{r.stderr}")
    r = promtool("test", "rules", "rules_test.yml", cwd=prom_dir)
    check(r.returncode == 0 and "SUCCESS" in r.stdout,
          f"promtool test rules failed:\n{r.stdout}{r.stderr}")

    with open(rules_path) as f:
        rules = yaml.safe_load(f)
    with open(os.path.join(prom_dir, "rules_test.yml")) as f:
        fixture = yaml.safe_load(f)
    alerts = [r["alert"] for g in rules["groups"] for r in g["rules"] if "alert" in r]
    records = [r["record"] for g in rules["groups"] for r in g["rules"] if "record" in r]
    check(len(alerts) >= 5 and len(records) >= 5, f"rules: alerts {alerts}, records {records}")
    fires, silent = set(), set()
    tested_records = set()
    for t in fixture["tests"]:
        for a in t.get("alert_rule_test", []):
            (fires if a.get("exp_alerts") else silent).add(a["alertname"])
        for e in t.get("promql_expr_test", []):
            tested_records.add(e["expr"])
    for name in alerts:
        check(name in fires, f"rules_test.yml never shows {name} firing")
        check(name in silent, f"rules_test.yml never shows {name} silent (exp_alerts: [])")
    check(tested_records & set(records), "rules_test.yml tests no recording rule")
    for name in ("SluiceDropsRising", "SluiceFidelityLostTime", "SluicePfcPausedStuck",
                 "SluiceBfcPausedStuck"):
        check(name in alerts, f"rules.yml has no alert {name}")

    # The unit tests must be able to fail: move every alert's threshold (and
    # drop its `for:`) in a copy and expect promtool test rules to object.
    mutated = copy.deepcopy(rules)
    for g in mutated["groups"]:
        for rule in g["rules"]:
            if "alert" in rule:
                rule["expr"] = f"({rule['expr']}) * 0 > 1"
    mdir = os.path.join(tmp, "mutated")
    os.makedirs(mdir)
    with open(os.path.join(mdir, "rules.yml"), "w") as f:
        yaml.safe_dump(mutated, f)
    shutil.copy(os.path.join(prom_dir, "rules_test.yml"), mdir)
    r = promtool("test", "rules", "rules_test.yml", cwd=mdir)
    check(r.returncode != 0, "promtool test rules passed on rules whose alerts never fire")
    for name in alerts:
        check(f"alertname: {name}," in r.stdout + r.stderr,
              f"silencing {name} did not fail its unit test:\n{(r.stdout + r.stderr)[-3000:]}")
    return rules, records


# ---------------------------------------------------------------- dashboard

def load_dashboard(srcdir):
    path = os.path.join(srcdir, "deploy", "grafana", "sluice.json")
    with open(path) as f:
        try:
            dash = json.load(f)
        except ValueError as e:
            raise TestFailure(f"{path}: not JSON: {e}")
    for key in ("title", "uid", "panels", "templating", "schemaVersion"):
        check(key in dash, f"{path}: no {key!r}")
    variables = dash["templating"]["list"]
    ds = [v for v in variables if v.get("type") == "datasource"]
    check(len(ds) == 1 and ds[0]["query"] == "prometheus",
          f"{path}: want one datasource variable of type prometheus, got {ds}")
    ds_ref = "${%s}" % ds[0]["name"]
    ids = [p["id"] for p in dash["panels"]]
    check(len(ids) == len(set(ids)), f"{path}: duplicate panel ids {ids}")
    targets = []
    for p in dash["panels"]:
        check("gridPos" in p and "type" in p, f"panel {p.get('title')}: no gridPos or type")
        if p["type"] == "row":
            continue
        check(p.get("datasource", {}).get("uid") == ds_ref,
              f"panel {p['title']!r}: datasource is not {ds_ref}")
        check(p.get("targets"), f"panel {p['title']!r}: no targets")
        for t in p["targets"]:
            check(t.get("datasource", {}).get("uid") == ds_ref and t.get("expr"),
                  f"panel {p['title']!r} target {t.get('refId')}: no expr or not on {ds_ref}")
            targets.append((p["title"], t["refId"], t["expr"]))
    return dash, targets


def panel_titles_cover(targets):
    """The issue's panel list: each family appears in some target."""
    exprs = " ".join(e for _, _, e in targets)
    for metric in ("sluice_port_rx_bytes_total", "sluice_port_tx_bytes_total",
                   "sluice_port_drops_total", "sluice_queue_depth_bytes",
                   "sluice_buffer_occupancy_bytes", "sluice_queue_residence_seconds_bucket",
                   "sluice_pfc_paused_seconds_total", "sluice_pfc_frames_sent_total",
                   "sluice_bfc_frames_sent_total", "sluice_bfc_paused_queues",
                   "sluice_floodgate_credit_sent_bytes_total", "sluice_floodgate_dst_paused",
                   "sluice_dibs_detours_total", "sluice_tcd_marks_total",
                   "sluice_flowtune_held_packets_total", "sluice_lcore_busy_ratio",
                   "sluice_shaper_lost_seconds_total", "sluice_mbuf_pool_in_use"):
        check(metric in exprs, f"no dashboard query uses {metric}")


# ---------------------------------------------------------------- sluice

HOST_RATE = "40Mbps"
LINK_RATE = "100Mbps"
OUT_RATE = "20Mbps"
FRAME = 1000


def fabric(tmp, k, name, mech, nic=None, edge_extra=None, hop_rtt="10us"):
    """Switches NAME_a and NAME_b: host h0 (replaying, looped) on a, an
    internal link a/u - b/d, host h1 (capture only, slower) on b."""
    src_mac, sw_mac = f"02:00:00:{k:02x}:00:a1", f"02:00:00:{k:02x}:00:01"
    rx = os.path.join(tmp, f"{name}_h0.pcap")
    gap = (FRAME + harness.WIRE_OVERHEAD) * 8 / 40e6
    harness.write_pcap(rx, harness.udp_frames(src_mac, sw_mac, f"10.{k}.0.", f"10.{k}.1.", 400,
                                              sizes=(FRAME,), flows=8, tos=1), gap=gap)
    h0 = harness.replay_host("h0", sw_mac, src_mac, f"10.{k}.0.1/24", HOST_RATE, rx=rx, nic=nic)
    h0["pcap"]["loop"] = True
    h1 = harness.replay_host("h1", f"02:00:00:{k:02x}:00:02", f"02:00:00:{k:02x}:00:a2",
                             f"10.{k}.1.1/24", OUT_RATE, tx=os.path.join(tmp, f"{name}_h1.out"))
    h1["pcap"]["snaplen"] = 64
    link = {"role": "switch", "rate": LINK_RATE, "delay": "1us", "hop_rtt": hop_rtt}
    a = harness.switch(f"{name}_a", [h0, dict(link, name="u", link=f"{name}_b/d")],
                       [harness.route(f"10.{k}.1.0/24", "u")],
                       buffer={"size": "512KB"}, **dict(mech, **(edge_extra or {})))
    b = harness.switch(f"{name}_b", [dict(link, name="d", link=f"{name}_a/u"), h1],
                       [harness.route(f"10.{k}.0.0/24", "d")],
                       buffer={"size": "256KB"}, **mech)
    return [a, b]


def sluice_config(tmp):
    switches = []
    switches += fabric(tmp, 1, "pfc", {"pfc": {"mode": "pfc", "xoff": "40KB"},
                                       "ecn": {"mode": "step", "k": "20KB"}, "tcd": {}})
    switches += fabric(tmp, 2, "bfc", {"bfc": {}}, nic="bfc")
    # A window (alpha x rate x hop_rtt + rate x credit_interval) must hold
    # a frame: 200 us at 100 Mb/s gives 3.9 KB.
    switches += fabric(tmp, 3, "fg", {"floodgate": {"dst_pause": True}}, nic="floodgate",
                       hop_rtt="200us")
    # Detours between two switches go back and forth; two per packet is enough.
    switches += fabric(tmp, 4, "dibs", {"dibs": {"max_detours": 2}},
                       edge_extra={"flowtune": {"allocator": f"127.0.0.1:{harness.free_port()}"}})
    return harness.write_config(os.path.join(tmp, "dash.yaml"), switches, mbufs=32768)


# ---------------------------------------------------------------- prometheus

class Prometheus:
    def __init__(self, tmp, rules_path, target):
        self.port = harness.free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.config = os.path.join(tmp, "prometheus.yml")
        with open(self.config, "w") as f:
            yaml.safe_dump({
                "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
                "rule_files": [rules_path],
                "scrape_configs": [{"job_name": "sluice",
                                    "static_configs": [{"targets": [target]}]}],
            }, f)
        self.log_path = os.path.join(tmp, "prometheus.log")
        self.cmd = ["prometheus", f"--config.file={self.config}",
                    f"--storage.tsdb.path={os.path.join(tmp, 'tsdb')}",
                    f"--web.listen-address=127.0.0.1:{self.port}"]
        self.proc = None

    def start(self):
        self._log = open(self.log_path, "w")
        self.proc = subprocess.Popen(self.cmd, stdout=self._log, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL)
        return self

    def log(self):
        with open(self.log_path) as f:
            return f.read()[-4000:]

    def stop(self, timeout=15):
        """SIGTERM to its PID, SIGKILL if it has not exited in `timeout` s."""
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        self._log.close()

    def api(self, path, **params):
        url = f"{self.url}/api/v1/{path}"
        if params:
            url += "?" + urllib.parse.urlencode(params, doseq=True)
        try:
            with urllib.request.urlopen(url, timeout=10) as r:
                body = json.load(r)
        except urllib.error.HTTPError as e:
            body = json.load(e)
        except OSError as e:
            raise TestFailure(f"prometheus API {url}: {e}\n{self.log()}")
        return body

    def query(self, expr):
        return self.api("query", query=expr)

    def wait_ready(self, timeout=60):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            check(self.proc.poll() is None, f"prometheus exited:\n{self.log()}")
            try:
                with urllib.request.urlopen(f"{self.url}/-/ready", timeout=2) as r:
                    if r.status == 200:
                        return
            except OSError:
                pass
            time.sleep(0.5)
        raise TestFailure(f"prometheus not ready after {timeout} s:\n{self.log()}")


def value_of(result):
    return float(result[0]["value"][1]) if result else None


# ---------------------------------------------------------------- variables

LABEL_VALUES = re.compile(r"^label_values\((.*),\s*(\w+)\)$")


def promql_regex(values):
    """What Grafana puts in place of a multi-value variable in a =~ matcher:
    the values as an alternation, regex-escaped, inside a PromQL string."""
    alt = "|".join(re.escape(v) for v in values)
    return ("(" + alt + ")").replace("\\", "\\\\")


def substitute(text, values):
    text = text.replace("$__rate_interval", RATE_INTERVAL).replace("$__interval", "1s")
    for name in sorted(values, key=len, reverse=True):
        text = text.replace("${%s}" % name, values[name]).replace("$" + name, values[name])
    check("$" not in text, f"unsubstituted variable in {text!r}")
    return text


def resolve_variables(prom, dash):
    """Each query variable in order: its label_values() through the series
    API, all values selected (the dashboard's default, All)."""
    values = {}
    for v in dash["templating"]["list"]:
        if v["type"] != "query":
            continue
        q = v["query"]["query"] if isinstance(v["query"], dict) else v["query"]
        m = LABEL_VALUES.match(q)
        check(m, f"variable {v['name']}: not label_values(selector, label): {q!r}")
        selector = substitute(m.group(1), values)
        body = prom.api(f"label/{m.group(2)}/values", **{"match[]": selector})
        check(body.get("status") == "success" and body.get("data"),
              f"variable {v['name']}: {q} -> {selector} gave {body}")
        values[v["name"]] = promql_regex(body["data"])
    return values


# ---------------------------------------------------------------- test

def wait_for_scrapes(prom, sluice, instance):
    deadline = time.monotonic() + 90
    n = 0
    while time.monotonic() < deadline:
        check(sluice.running(), "sluice exited\n" + sluice.logs())
        body = prom.query(f'count_over_time(sluice_uptime_seconds{{instance="{instance}"}}[5m])')
        n = value_of(body.get("data", {}).get("result", [])) or 0
        if n >= SCRAPES_WANTED:
            return
        time.sleep(1)
    raise TestFailure(f"only {n} scrapes of sluice in 90 s\n{prom.log()}")


def wait_for_records(prom, records, timeout=60):
    deadline = time.monotonic() + timeout
    missing = records
    while time.monotonic() < deadline:
        missing = []
        for rec in records:
            body = prom.query(rec)
            check(body.get("status") == "success", f"recording rule {rec}: {body}")
            if not body["data"]["result"]:
                missing.append(rec)
        if not missing:
            return
        time.sleep(1)
    raise TestFailure(f"recording rules without series after {timeout} s: {missing}")


def check_rule_health(prom):
    body = prom.api("rules")
    check(body.get("status") == "success", f"/api/v1/rules: {body}")
    groups = body["data"]["groups"]
    check({g["name"] for g in groups} >= {"sluice-recording", "sluice-alerts"},
          f"rule groups loaded: {[g['name'] for g in groups]}")
    for g in groups:
        for r in g["rules"]:
            check(r.get("health") == "ok", f"rule {r.get('name')}: health {r.get('health')}"
                  f" {r.get('lastError')}")


def check_dashboard_queries(prom, dash, targets):
    values = resolve_variables(prom, dash)
    failures = []
    for title, ref, expr in targets:
        q = substitute(expr, values)
        body = prom.query(q)
        if body.get("status") != "success":
            failures.append(f"{title} [{ref}]: error {body.get('error')}: {q}")
        elif not body["data"]["result"]:
            failures.append(f"{title} [{ref}]: empty result: {q}")
    check(not failures, "dashboard queries that failed:\n" + "\n".join(failures))
    print(f"{len(targets)} dashboard queries answered with series")
    return values


def check_traffic(prom, instance):
    """The fabrics really carried traffic, and the mechanisms acted."""
    sel = f'instance="{instance}"'
    for expr, what in (
            (f'sum by (switch) (rate(sluice_port_tx_bytes_total{{{sel}, port="h1"}}[10s])) > 0',
             "bytes delivered to every far host"),
            (f'sum by (switch) (sluice_pfc_frames_sent_total{{{sel}}}) > 0', "PFC frames sent"),
            (f'sum by (switch) (sluice_bfc_frames_sent_total{{{sel}}}) > 0', "BFC frames sent"),
            (f'sum by (switch) (sluice_floodgate_credit_sent_bytes_total{{{sel}}}) > 0',
             "Floodgate credit sent")):
        body = prom.query(expr)
        check(body.get("status") == "success" and body["data"]["result"],
              f"{what}: nothing for {expr}")
    body = prom.query(f'count(sum by (switch) (rate(sluice_port_tx_bytes_total{{{sel}, port="h1"}}[10s])) > 0)')
    check(value_of(body["data"]["result"]) == 4,
          f"traffic reached the far host of only {body['data']['result']} of 4 fabrics")


def test(binary, srcdir):
    ensure_prometheus()
    with harness.TempDir("dashboards") as tmp:
        rules, records = check_rules(srcdir, tmp)
        dash, targets = load_dashboard(srcdir)
        panel_titles_cover(targets)
        config = sluice_config(tmp)
        sluice = harness.Sluice(binary, tmp, config, "dash", duration=240)
        prom = None
        try:
            sluice.start()
            sluice.metrics_text(timeout=30)
            instance = f"127.0.0.1:{sluice.metrics_port}"
            prom = Prometheus(tmp, os.path.join(srcdir, "deploy", "prometheus", "rules.yml"),
                              instance).start()
            prom.wait_ready()
            wait_for_scrapes(prom, sluice, instance)
            check_traffic(prom, instance)
            check_dashboard_queries(prom, dash, targets)
            wait_for_records(prom, records)
            check_rule_health(prom)
            check(sluice.running(), "sluice exited during the test\n" + sluice.logs())
        finally:
            if prom is not None:
                prom.stop()
            if sluice.proc is not None and sluice.returncode is None:
                sluice.stop(timeout=30)
        sluice.expect_clean_exit()


if __name__ == "__main__":
    harness.main(test)
