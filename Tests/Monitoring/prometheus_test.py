#!/usr/bin/env python3
"""GET /metrics end to end: the built `healthgate run` with two simulated heart-rate straps, the
SQLite store and an MQTT follower whose broker is down (so it lags), serving the metrics on a
listener of their own and on the live board's. Debian's `promtool check metrics` must find the
exposition clean, the figures must say what the gateway does, and a real Prometheus (Debian's
`prometheus`) started here scrapes the gateway and answers queries about it.

usage: prometheus_test.py HEALTHGATE"""
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

HEALTHGATE = sys.argv[1]
passed = failed = 0


def check(condition, what):
    global passed, failed
    if condition:
        passed += 1
        print(f"PASS: {what}")
    else:
        failed += 1
        print(f"FAIL: {what}")


def poll(seconds, probe):
    deadline = time.time() + seconds
    while time.time() < deadline:
        value = probe()
        if value:
            return value
        time.sleep(0.25)
    return None


def fetch(url):
    with urllib.request.urlopen(url, timeout=5) as response:
        return response.headers.get("Content-Type"), response.read().decode()


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def samples(text):
    """{(name, frozenset(labels)): value} of an exposition."""
    result = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        match = re.match(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$', line)
        if not match:
            continue
        labels = frozenset(re.findall(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"', match.group(3) or ""))
        result[(match.group(1), labels)] = float(match.group(4))
    return result


def values(parsed, name, **labels):
    wanted = set(labels.items())
    return [value for (metric, have), value in parsed.items() if metric == name and wanted <= set(have)]


work = tempfile.mkdtemp(prefix="healthgate-metrics-")
dead_broker = free_port()  # nothing listens there: the MQTT follower cannot send
config = {
    "sources": [{"kind": "ble-heart-rate", "name": "straps", "config": {
        "transport": "simulated", "maxDevices": 2, "heartbeatSeriesSeconds": 3,
        "simulation": {"heartRateMonitors": 2, "notificationsPerSecond": 2}}}],
    "sinks": [{"kind": "sqlite", "name": "store"},
              {"kind": "mqtt", "name": "fleet", "config": {"host": "127.0.0.1", "port": dead_broker}}],
    "store": {"path": os.path.join(work, "store.sqlite")},
    "controlSocket": os.path.join(work, "control.sock"),
    # The follower's broker never answers, so a graceful stop cannot drain it: forced after 2 s.
    "shutdownTimeoutSeconds": 2,
    "metrics": {"listen": "127.0.0.1:0"},
    "web": {"listen": "127.0.0.1:0"},
}
with open(os.path.join(work, "config.json"), "w") as file:
    json.dump(config, file)
log_path = os.path.join(work, "healthgate.log")
log = open(log_path, "w")
gateway = subprocess.Popen([HEALTHGATE, "run", "--config", os.path.join(work, "config.json")], stdout=log, stderr=log)
prometheus = None
try:
    def logged(pattern):
        with open(log_path) as file:
            match = re.search(pattern, file.read())
        return match.group(1) if match else None

    own = poll(20, lambda: logged(r"metrics at (http://\S+/metrics)\s"))
    board = poll(20, lambda: logged(r"live board at \S+, metrics at (http://\S+/metrics)"))
    check(own is not None, f"the metrics listener is logged: {own}")
    check(board is not None, f"the board's listener serves the metrics too: {board}")
    if own is None:
        raise SystemExit(1)

    def connected():
        parsed = samples(fetch(own)[1])
        devices = values(parsed, "healthgate_device_connected")
        records = values(parsed, "healthgate_plugin_records_total", plugin="straps")
        lag = values(parsed, "healthgate_follower_lag_records", follower="fleet")
        return parsed if len(devices) == 2 and min(devices) == 1 and records and records[0] >= 20 and lag and lag[0] > 0 else None

    parsed = poll(60, connected)
    check(parsed is not None, "both simulated straps are connected and at least 20 records published")
    content_type, text = fetch(own)
    check(content_type == "text/plain; version=0.0.4; charset=utf-8", f"content type {content_type}")
    lint = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, text=True)
    check(lint.returncode == 0 and lint.stdout.strip() == "" and lint.stderr.strip() == "",
          f"promtool check metrics is clean ({lint.returncode}: {lint.stdout.strip()} {lint.stderr.strip()})")
    parsed = samples(text)
    families = sorted({name for name, _ in parsed})
    print("families: " + ", ".join(families))
    for family in ["healthgate_plugin_up", "healthgate_plugin_records_total", "healthgate_plugin_dropped_records_total",
                   "healthgate_sink_queue_records", "healthgate_follower_lag_records", "healthgate_follower_lag_seconds",
                   "healthgate_device_connected", "healthgate_device_link_losses_total", "healthgate_device_battery_ratio",
                   "healthgate_adapter_links", "healthgate_adapter_link_slots", "healthgate_adapter_power_cycles_total",
                   "healthgate_store_latest_anchor", "healthgate_clock_synchronized"]:
        check(family in families, f"{family} is exposed")
    stored = values(parsed, "healthgate_plugin_records_total", plugin="store", role="sink")
    check(stored and stored[0] > 0, f"the sqlite sink wrote {stored} records")
    lag = values(parsed, "healthgate_follower_lag_records", follower="fleet")
    seconds = values(parsed, "healthgate_follower_lag_seconds", follower="fleet")
    anchor = values(parsed, "healthgate_store_latest_anchor")
    check(lag and anchor and 0 < lag[0] <= anchor[0], f"the MQTT follower lags {lag} of {anchor} changes")
    check(seconds and seconds[0] > 0, f"… by {seconds} seconds")
    batteries = values(parsed, "healthgate_device_battery_ratio", plugin="straps")
    check(len(batteries) == 2 and all(0 < b <= 1 for b in batteries), f"battery ratios {batteries}")
    links = values(parsed, "healthgate_adapter_links", adapter="default")
    check(links == [2.0], f"the adapter holds {links} links")
    synchronized = values(parsed, "healthgate_clock_synchronized")
    check(synchronized in ([0.0], [1.0]), f"clock synchronized: {synchronized}")
    board_text = fetch(board)[1] if board else ""
    check("healthgate_plugin_records_total" in board_text, "the board's /metrics has the same families")
    try:
        fetch(own.replace("/metrics", "/api/board"))
        check(False, "the metrics listener serves nothing but /metrics")
    except urllib.error.HTTPError as error:
        check(error.code == 404, f"the metrics listener answers 404 elsewhere ({error.code})")

    # A real Prometheus scrapes the gateway every second.
    target = urllib.parse.urlparse(own).netloc
    web_port = free_port()
    with open(os.path.join(work, "prometheus.yml"), "w") as file:
        file.write(f"global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n"
                   f"  - job_name: healthgate\n    static_configs:\n      - targets: ['{target}']\n")
    prometheus = subprocess.Popen(
        ["prometheus", f"--config.file={os.path.join(work, 'prometheus.yml')}",
         f"--storage.tsdb.path={os.path.join(work, 'tsdb')}", f"--web.listen-address=127.0.0.1:{web_port}"],
        stdout=open(os.path.join(work, "prometheus.log"), "w"), stderr=subprocess.STDOUT)

    def query(expression):
        try:
            answer = json.loads(fetch(f"http://127.0.0.1:{web_port}/api/v1/query?"
                                      + urllib.parse.urlencode({"query": expression}))[1])
        except (OSError, ValueError):
            return None
        results = answer.get("data", {}).get("result", [])
        return results or None

    up = poll(60, lambda: query('up{job="healthgate"} == 1'))
    check(up is not None, "Prometheus scrapes the gateway (up == 1)")
    published = poll(30, lambda: query('healthgate_plugin_records_total{plugin="straps"} > 0'))
    check(published is not None, f"Prometheus answers a query: records published {published and published[0]['value'][1]}")
    rate = poll(30, lambda: query('sum(rate(healthgate_plugin_records_total{role="source"}[10s])) > 0'))
    check(rate is not None, f"… and a rate over its samples: {rate and rate[0]['value'][1]} records/s")
    lagging = poll(30, lambda: query('healthgate_follower_lag_records{follower="fleet"} > 0'))
    check(lagging is not None, "… and the follower's lag")
finally:
    if prometheus:
        prometheus.terminate()
        prometheus.wait(timeout=30)
    gateway.send_signal(signal.SIGTERM)
    try:
        status = gateway.wait(timeout=30)
    except subprocess.TimeoutExpired:
        gateway.kill()
        status = None
    with open(log_path) as file:
        tail = file.read()
    check(status == 1 and "sinks did not drain within 2.0 seconds; forcing shutdown" in tail,
          f"healthgate run stops on SIGTERM, forced after 2 s as its follower cannot drain (status {status})")
    if failed:
        print(open(log_path).read()[-4000:])
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
