#!/usr/bin/env python3
"""Checks `healthgate config schema` against the program itself (issue 35).

usage: check_configuration_schema.py --binary PATH [--full] [agreement] [examples] [sweep]

  agreement  generates configurations from the schema (valid values, values out of range, whole
             numbers with fractions, values of the wrong type, strings outside an enumeration,
             unknown keys) and checks that `healthgate config check` and an independent JSON
             Schema validator (the `jsonschema` package) give the same verdict on each one.
  examples   every example configuration in the README and docs/, the plugin and module READMEs, the
             sample configurations and the commands' help texts validates against the schema
             and passes `config check`.
  sweep      runs `healthgate run --duration 1` with every numeric key of every plugin at its
             minimum and maximum (--full: also its default and the smallest positive double
             inside its range); every run must exit 0 or with a clear error (exit 78), never by
             a signal, and within a time limit.

With no section named, all three run. Exit status 0 when every check passed, 1 otherwise.
"""

import argparse
import contextlib
import copy
import json
import os
import re
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import jsonschema

ROOT = Path(__file__).resolve().parents[2]
SMALLEST_DOUBLE = 5e-324


def load_schema(binary):
    text = subprocess.run([binary, "config", "schema"], check=True, capture_output=True, text=True).stdout
    schema = json.loads(text)
    jsonschema.Draft202012Validator.check_schema(schema)
    return schema


def plugin_schemas(schema):
    """kind -> (section, the entry's schema) for every plugin alternative."""
    plugins = {}
    for section in ("sources", "sinks"):
        for entry in schema["properties"][section]["items"]["oneOf"]:
            plugins[entry["properties"]["kind"]["const"]] = (section, entry)
    return plugins


def numeric_keys(node, path=()):
    """(path, rule) of every number reachable through objects alone (no arrays, no oneOf)."""
    if node.get("type") in ("number", "integer"):
        yield path, node
    elif node.get("type") == "object":
        for name, child in node.get("properties", {}).items():
            yield from numeric_keys(child, path + (name,))


def enum_keys(node, path=()):
    if node.get("type") == "string" and "enum" in node:
        yield path, node
    elif node.get("type") == "object":
        for name, child in node.get("properties", {}).items():
            yield from enum_keys(child, path + (name,))


def object_paths(node, path=()):
    if node.get("type") == "object":
        yield path
        for name, child in node.get("properties", {}).items():
            yield from object_paths(child, path + (name,))


def set_path(document, path, value):
    node = document
    for name in path[:-1]:
        node = node.setdefault(name, {})
    node[path[-1]] = value


# The base of every generated configuration: each plugin once, with values chosen so that
# changing one key at a time meets no rule that ties several keys together (two simulated
# device kinds, so either may be 0; delays whose maximum is already the largest).
SERIAL_PATH = "/dev/ttyACM0"


def base_plugin_config(kind):
    reconnect = {"initialDelaySeconds": 0.01, "maxDelaySeconds": 86400}
    retry = {"initialDelaySeconds": 0.001, "maxDelaySeconds": 86400}
    special = {
        "ble-heart-rate": {
            "transport": "simulated", "reconnect": reconnect, "simulation": {"heartRateMonitors": 1, "footPods": 1}},
        "ble-fitness": {"transport": "simulated", "reconnect": reconnect, "simulation": {"bikes": 1, "rowers": 1}},
        # The broadcast sources are no profiles of the connection kit: no reconnect key.
        "ble-polar-broadcast": {"transport": "simulated"},
        "ble-mi-scale": {"transport": "simulated"},
        "serial-pedometer": {"path": SERIAL_PATH},
        # A stick needs the ANT+ network key, which no test has: the simulated stick makes its own.
        "ant-heart-rate": {"transport": "simulated", "simulation": {"straps": 2}},
        "sqlite": {},
        "http-repository": {"url": "http://127.0.0.1:9/ingest", "retry": retry},
        "mqtt": {"host": "127.0.0.1", "port": 9, "retry": retry},
        # An adapter of the conformance check's tests, which keeps the protocol.
        "exec": {"command": ["python3", str(ROOT / "Tests/Fixtures/adapters/scale.py")]},
    }
    if kind in special:
        return special[kind]
    # Every Bluetooth profile of the kit runs its simulator with its default devices.
    if kind.startswith("ble-"):
        return {"transport": "simulated", "reconnect": reconnect}
    raise SystemExit(f"check_configuration_schema: no base configuration for the plugin kind {kind!r}; add one to base_plugin_config")


def base_document(plugins):
    document = {"sources": [], "sinks": [], "profile": {"maximumHeartRate": 185}, "store": {}, "bluetooth": {}}
    for kind, (section, _) in plugins.items():
        entry = {"kind": kind, "config": base_plugin_config(kind)}
        if kind == "sqlite":
            entry["queue"] = {"capacity": 10000}
        document[section].append(entry)
    return document


def locations(schema, plugins):
    """(where in the document, the schema node there) for the gateway's keys and each plugin's."""
    yield (), schema
    for index_by_section in ({"sources": 0, "sinks": 0},):
        for kind, (section, entry) in plugins.items():
            index = index_by_section[section]
            index_by_section[section] += 1
            yield (section, index, "config"), entry["properties"]["config"]
            if "queue" in entry["properties"]:
                yield (section, index, "queue"), entry["properties"]["queue"]


def resolve(document, prefix):
    node = document
    for name in prefix:
        node = node[name]
    return node


def mutations(schema, plugins):
    """(label, document) pairs: the base and one change each."""
    base = base_document(plugins)
    yield "base", base
    for prefix, node in locations(schema, plugins):
        if prefix == ():
            # The gateway's own keys, without descending into the plugin lists.
            node = {**node, "properties": {k: v for k, v in node["properties"].items() if k not in ("sources", "sinks")}}
        for path, rule in numeric_keys(node):
            low, high = rule["minimum"], rule["maximum"]
            values = [low, high, low - max(1, abs(low)) * 1e-3 if rule["type"] == "number" else low - 1,
                      high + max(1, abs(high)) * 1e-3 if rule["type"] == "number" else high + 1,
                      "12", True, [low], 1e300, -1e300]
            if "default" in rule:
                values.append(rule["default"])
            if rule["type"] == "integer":
                values.append(low + 0.5)
            if "enum" in rule:
                values += [v + 1 for v in rule["enum"][:3]]
            if low <= 0 <= high and rule["type"] == "number":
                values.append(SMALLEST_DOUBLE)
            for value in values:
                document = copy.deepcopy(base)
                set_path(resolve(document, prefix), path, value)
                yield f"{'.'.join(map(str, prefix + path))} = {json.dumps(value)}", document
        for path, rule in enum_keys(node):
            for value in [rule["enum"][0], rule["enum"][0] + "x", rule["enum"][-1].upper() + "?", 1]:
                document = copy.deepcopy(base)
                set_path(resolve(document, prefix), path, value)
                yield f"{'.'.join(map(str, prefix + path))} = {json.dumps(value)}", document
        for path in object_paths(node):
            for name in ("bogus", "batchsize", "maxDelay"):
                document = copy.deepcopy(base)
                target = resolve(document, prefix)
                for step in path:
                    target = target.setdefault(step, {})
                if name in target or name in resolve_schema_keys(node, path):
                    continue
                target[name] = 1
                yield f"{'.'.join(map(str, prefix + path)) or '(top)'} + unknown key {name}", document


def resolve_schema_keys(node, path):
    for name in path:
        node = node["properties"][name]
    return node.get("properties", {})


def isolated_environment(directory):
    directory = Path(directory)
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "HEALTHGATE_"))}
    for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR", "XDG_CACHE_HOME"):
        path = directory / name.lower()
        path.mkdir(exist_ok=True)
        os.chmod(path, 0o700)
        environment[name] = str(path)
    environment["HOME"] = str(directory)
    environment["TZ"] = "UTC"
    # The ANT+ network key an `ant-heart-rate` stick reads by default (in the configuration
    # directory): a random key of the test's own, never the licensed one.
    key = directory / "xdg_config_home" / "healthgate" / "ant-network-key"
    key.parent.mkdir(exist_ok=True)
    key.write_text(" ".join(f"{byte:02X}" for byte in os.urandom(8)) + "\n")
    return environment


def config_check(binary, document, directory):
    path = Path(directory) / "config.json"
    path.write_text(json.dumps(document))
    result = subprocess.run(
        [binary, "config", "check", str(path)], capture_output=True, text=True, timeout=60,
        env=isolated_environment(directory))
    if result.returncode not in (0, 78):
        raise RuntimeError(f"config check exited {result.returncode}: {result.stderr.strip()}")
    return result.returncode == 0, result.stderr.strip()


def agreement(binary, schema):
    validator = jsonschema.Draft202012Validator(schema)
    plugins = plugin_schemas(schema)
    cases = list(mutations(schema, plugins))
    disagreements = []
    verdicts = {True: 0, False: 0}

    def judge(case):
        label, document = case
        with tempfile.TemporaryDirectory(prefix="hg-schema-") as directory:
            accepted, message = config_check(binary, document, directory)
        errors = sorted(validator.iter_errors(document), key=lambda e: list(e.absolute_path))
        return label, accepted, not errors, message, errors[0].message if errors else ""

    with ThreadPoolExecutor(max_workers=4) as pool:
        for label, accepted, valid, message, reason in pool.map(judge, cases):
            verdicts[accepted] += 1
            if accepted != valid:
                disagreements.append(
                    f"  {label}: config check {'accepts' if accepted else 'refuses'} ({message or 'OK'}), "
                    f"jsonschema {'accepts' if valid else 'refuses'} ({reason or 'valid'})")
    print(f"agreement: {len(cases)} configurations compared, {verdicts[True]} accepted and {verdicts[False]} "
          f"refused by config check, {len(disagreements)} disagreements")
    for line in disagreements:
        print(line)
    return not disagreements


def example_texts():
    """(where, JSON text) of every example: fenced json blocks, sample configs, help texts."""
    files = [ROOT / "README.md"] + sorted(ROOT.glob("docs/*.md")) + sorted(ROOT.glob("plugins/*/README.md")) + sorted(ROOT.glob("Sources/**/README*.md"))
    for file in files:
        text = file.read_text()
        for number, block in enumerate(re.findall(r"```json\n(.*?)```", text, re.S)):
            yield f"{file.relative_to(ROOT)} block {number + 1}", block
    for file in sorted(ROOT.glob("plugins/*/sample-config.json")):
        yield str(file.relative_to(ROOT)), file.read_text()


def help_texts(binary):
    """(where, JSON text) of every {...} in a command's help that parses as JSON."""
    commands = [[]]
    listing = subprocess.run([binary, "--help"], capture_output=True, text=True).stdout
    for line in listing.splitlines():
        match = re.match(r"^\s{2,}([a-z][a-z-]+)\s{2,}", line)
        if match:
            commands.append([match.group(1)])
    seen = set()
    while commands:
        command = commands.pop()
        if tuple(command) in seen:
            continue
        seen.add(tuple(command))
        text = subprocess.run([binary, *command, "--help"], capture_output=True, text=True).stdout
        if command:
            for line in text.split("SUBCOMMANDS:")[-1].splitlines() if "SUBCOMMANDS:" in text else []:
                match = re.match(r"^\s{2,}([a-z][a-z-]+)\s{2,}", line)
                if match:
                    commands.append(command + [match.group(1)])
        for fragment in balanced_objects(text):
            yield f"healthgate {' '.join(command)} --help".replace("  ", " "), fragment


def balanced_objects(text):
    depth, start = 0, None
    for index, character in enumerate(text):
        if character == "{":
            if depth == 0:
                start = index
            depth += 1
        elif character == "}" and depth:
            depth -= 1
            if depth == 0:
                yield text[start:index + 1]


# Help texts whose {...} show output with parts elided, not configuration.
OUTPUT_EXAMPLES = {"healthgate query changes --help", "healthgate workout show --help"}


def examples(binary, schema):
    validator = jsonschema.Draft202012Validator(schema)
    plugins = plugin_schemas(schema)
    checked, skipped, failures = 0, 0, []
    for where, text in list(example_texts()) + list(help_texts(binary)):
        try:
            value = json.loads(text)
        except json.JSONDecodeError as error:
            if where.startswith("healthgate") and where not in OUTPUT_EXAMPLES:
                # A help text's example must be one a user can paste.
                failures.append(f"  {where}: {text!r} is not JSON ({error})")
            else:
                skipped += 1  # a README fragment with comments or an ellipsis, or elided output
            continue
        document = as_document(value, where, plugins, schema)
        if document is None:
            skipped += 1
            continue
        checked += 1
        errors = list(validator.iter_errors(document))
        if errors:
            failures.append(f"  {where}: {errors[0].message} at {list(errors[0].absolute_path)}")
            continue
        with tempfile.TemporaryDirectory(prefix="hg-example-") as directory:
            # Referenced files stand in the example for the reader's own; make them exist.
            for file in referenced_files(document):
                Path(directory, file.lstrip("/")).parent.mkdir(parents=True, exist_ok=True)
            accepted, message = config_check(binary, retarget_files(document, directory), directory)
        if not accepted and "does not exist" not in message and "cannot read" not in message:
            failures.append(f"  {where}: config check refuses it: {message}")
    print(f"examples: {checked} example configurations validated against the schema and config check, "
          f"{skipped} fragments that are not whole configurations skipped, {len(failures)} failures")
    for line in failures:
        print(line)
    return not failures


def as_document(value, where, plugins, schema):
    """The example as a whole configuration, or None when it is not one."""
    if not isinstance(value, dict) or not value:
        return None
    if value.keys() <= schema["properties"].keys():
        return value
    if "kind" in value and value["kind"] in plugins:
        return {plugins[value["kind"]][0]: [value]}
    folder = re.match(r"plugins/([^/]+)/", where)
    if folder:
        kinds = [k for k, (_, entry) in plugins.items()
                 if value.keys() <= entry["properties"]["config"].get("properties", {}).keys()
                 and plugin_folder(k) == folder.group(1)]
        if kinds:
            return {plugins[kinds[0]][0]: [{"kind": kinds[0], "config": value}]}
    return None


def plugin_folder(kind):
    return {"ble-heart-rate": "HeartRateMonitor", "ble-fitness": "FitnessEquipment", "ble-health": "HealthDevices",
            "serial-pedometer": "SerialPedometer", "ant-heart-rate": "ANTHeartRate", "sqlite": "SQLiteStore", "http-repository": "HTTPRepository",
            "mqtt": "MQTTBroker"}[kind]


FILE_KEYS = {"caFile", "certFile", "keyFile", "passwordFile", "tokenFile", "networkKeyFile"}


def referenced_files(value):
    if isinstance(value, dict):
        for key, child in value.items():
            if key in FILE_KEYS and isinstance(child, str):
                yield child
            else:
                yield from referenced_files(child)
    elif isinstance(value, list):
        for child in value:
            yield from referenced_files(child)


def retarget_files(value, directory):
    if isinstance(value, dict):
        out = {}
        for key, child in value.items():
            if key in FILE_KEYS and isinstance(child, str):
                path = Path(directory, child.lstrip("/"))
                # An ANT+ network key file holds 8 bytes as hex: a random key of the test's own.
                path.write_text(" ".join(f"{b:02X}" for b in os.urandom(8)) + "\n" if key == "networkKeyFile" else "secret\n")
                out[key] = str(path)
            else:
                out[key] = retarget_files(child, directory)
        return out
    if isinstance(value, list):
        return [retarget_files(child, directory) for child in value]
    return value


@contextlib.contextmanager
def pseudo_terminal():
    """The path of a new pty's terminal side, open until the block ends."""
    master, slave = os.openpty()
    try:
        yield os.ttyname(slave)
    finally:
        os.close(master)
        os.close(slave)


def sweep(binary, schema, full):
    plugins = plugin_schemas(schema)
    runs = []
    for kind, (section, entry) in plugins.items():
        for path, rule in numeric_keys(entry["properties"]["config"]):
            low, high = rule["minimum"], rule["maximum"]
            values = [low, high]
            if full:
                values.append(rule.get("default", low))
                smallest = SMALLEST_DOUBLE if low <= 0 < high else low
                if rule["type"] == "number":
                    values.append(smallest)
            for value in dict.fromkeys(values):
                runs.append((kind, section, path, value))
    failures, outcomes = [], {}

    def run(case):
        kind, section, path, value = case
        if kind == "serial-pedometer":
            # A real pty of the run's own for the serial pedometer to open: the port is locked
            # (TIOCEXCL), and the runs overlap.
            with pseudo_terminal() as slave_path:
                return run_with(case, {"path": slave_path})
        return run_with(case, base_plugin_config(kind))

    def run_with(case, config):
        kind, section, path, value = case
        if kind == "serial-pedometer" and path[0] == "rfcomm":
            config = {"rfcomm": {"address": "00:11:22:33:44:55", "channel": 1}}
        set_path(config, path, value)
        # A stop drains what the second stored (a CGM's 14 days of history at a key's maximum,
        # every commit synced) within the shutdown timeout: 30 s, as the device lab loads the
        # machine beside this check.
        document = {section: [{"kind": kind, "config": config}], "shutdownTimeoutSeconds": 30}
        with tempfile.TemporaryDirectory(prefix="hg-sweep-") as directory:
            file = Path(directory) / "config.json"
            file.write_text(json.dumps(document))
            try:
                result = subprocess.run(
                    [binary, "run", "--config", str(file), "--duration", "1"], capture_output=True, text=True,
                    timeout=60, env=isolated_environment(directory))
                return case, result.returncode, result.stderr
            except subprocess.TimeoutExpired as expired:
                return case, "timeout", (expired.stderr or b"").decode(errors="replace")

    # Eight at once: each run mostly waits out its one second (the whole short sweep costs the
    # processor about a tenth of its wall time), so more at once shortens it without loading it.
    with ThreadPoolExecutor(max_workers=8) as pool:
        for (kind, section, path, value), status, stderr in pool.map(run, runs):
            label = f"{kind} {'.'.join(path)} = {value!r}"
            outcomes[status] = outcomes.get(status, 0) + 1
            last = stderr.strip().splitlines()[-1] if stderr.strip() else ""
            if status == "timeout" or not isinstance(status, int) or status < 0 or status not in (0, 78):
                failures.append(f"  {label}: exit {status}: {last}")
            elif status == 78 and "configuration error" not in stderr:
                failures.append(f"  {label}: exit 78 without a configuration error: {last}")
    keys = len({(k, p) for k, _, p, _ in runs})
    print(f"sweep ({'full' if full else 'short'}): {keys} numeric keys of {len(plugins)} plugins, {len(runs)} runs of "
          f"'healthgate run --duration 1': " + ", ".join(f"exit {k}: {v}" for k, v in sorted(outcomes.items(), key=str))
          + f"; {len(failures)} failures")
    for line in failures:
        print(line)
    return not failures


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", required=True)
    parser.add_argument("--full", action="store_true", help="the full sweep")
    parser.add_argument("sections", nargs="*", choices=["agreement", "examples", "sweep", []], default=[])
    arguments = parser.parse_args()
    sections = arguments.sections or ["agreement", "examples", "sweep"]
    schema = load_schema(arguments.binary)
    passed = True
    if "agreement" in sections:
        passed &= agreement(arguments.binary, schema)
    if "examples" in sections:
        passed &= examples(arguments.binary, schema)
    if "sweep" in sections:
        passed &= sweep(arguments.binary, schema, arguments.full)
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
