"""Checks the Home Assistant MQTT discovery a broker holds, as Home Assistant would read it.

Input (stdin): {"messages": [{"topic", "payload", "retained"}...], "retained": [...], "prefix":
"homeassistant"}: every message a subscriber to '#' saw while the gateway published, in order,
and what a subscriber that came later received (the retained messages, as a Home Assistant
starting then finds them). For every discovery config (a retained, non-empty message on
{prefix}/sensor/.../config) it checks that the payload is a JSON object with
the keys an MQTT sensor needs, that its unit is one Home Assistant accepts for its device class,
that its state_topic carried values, and that Home Assistant's template language (Jinja2, in the
sandbox Home Assistant uses) turns the newest of them into a number through value_template; and
that its availability topic says "online". Prints one JSON line per sensor:
{"unique_id", "state_topic", "state", "unit", "device_class", "device"} and exits 1 with the
reasons when anything fails.
"""
import json
import sys

from jinja2.sandbox import ImmutableSandboxedEnvironment

# Units Home Assistant accepts for the device classes healthgate uses (its sensor documentation,
# "Device class" table), written down here independently of the gateway's own table.
ACCEPTED_UNITS = {
    "battery": {"%"},
    "blood_glucose_concentration": {"mg/dL", "mmol/L"},
    "distance": {"km", "m", "cm", "mm", "mi", "nmi", "yd", "ft", "in"},
    "duration": {"d", "h", "min", "s", "ms", "µs"},
    "power": {"mW", "W", "kW", "MW", "GW", "TW", "BTU/h"},
    "pressure": {"Pa", "kPa", "hPa", "bar", "cbar", "mbar", "mmHg", "inHg", "inH₂O", "psi"},
    "speed": {"ft/s", "in/d", "in/h", "in/s", "km/h", "kn", "m/s", "mph", "mm/d", "mm/s"},
    "temperature": {"°C", "°F", "K"},
    "weight": {"kg", "g", "mg", "µg", "oz", "lb", "st"},
}
REQUIRED = ["name", "unique_id", "state_topic", "value_template", "availability_topic", "device"]


def main():
    data = json.load(sys.stdin)
    prefix = data.get("prefix", "homeassistant")
    messages = data["messages"]
    latest = {}
    for message in data["retained"]:
        if message["retained"]:
            latest[message["topic"]] = message
    values = {}
    for message in messages:
        if not message["topic"].startswith(prefix + "/") and message["payload"]:
            values[message["topic"]] = message["payload"]
    environment = ImmutableSandboxedEnvironment()
    failures = []
    sensors = []
    for topic, message in sorted(latest.items()):
        if not (topic.startswith(prefix + "/sensor/") and topic.endswith("/config")):
            continue
        if message["payload"] == "":
            continue  # removed
        try:
            config = json.loads(message["payload"])
        except ValueError as error:
            failures.append(f"{topic}: not JSON: {error}")
            continue
        missing = [key for key in REQUIRED if key not in config]
        if missing:
            failures.append(f"{topic}: lacks {missing}")
            continue
        device = config["device"]
        if not device.get("identifiers") or not device.get("name"):
            failures.append(f"{topic}: the device block needs identifiers and a name: {device}")
        levels = topic.split("/")
        if len(levels) != 5 or not all(part.replace("_", "").replace("-", "").isalnum() for part in levels[2:4]):
            failures.append(f"{topic}: node and object ids must be [a-zA-Z0-9_-]")
        device_class = config.get("device_class")
        unit = config.get("unit_of_measurement")
        if device_class is not None and unit not in ACCEPTED_UNITS.get(device_class, set()):
            failures.append(f"{topic}: unit {unit!r} is not one Home Assistant accepts for {device_class}")
        availability = latest.get(config["availability_topic"])
        if availability is None or availability["payload"] != "online":
            failures.append(f"{topic}: its availability topic {config['availability_topic']} does not say online")
        payload = values.get(config["state_topic"])
        if payload is None:
            failures.append(f"{topic}: nothing was published on its state topic {config['state_topic']}")
            continue
        try:
            state = environment.from_string(config["value_template"]).render(value_json=json.loads(payload), value=payload)
            number = float(state)
        except Exception as error:  # noqa: BLE001 - every failure is reported with its topic
            failures.append(f"{topic}: value_template {config['value_template']!r} on {payload[:120]}: {error}")
            continue
        sensors.append({
            "unique_id": config["unique_id"], "state_topic": config["state_topic"], "state": number, "unit": unit,
            "device_class": device_class, "device": device["name"], "config_topic": topic,
        })
    for sensor in sensors:
        print(json.dumps(sensor, sort_keys=True))
    if failures:
        print("\n".join(failures), file=sys.stderr)
        sys.exit(1)


main()
