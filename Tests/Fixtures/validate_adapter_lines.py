#!/usr/bin/env python3
"""Validates adapter-protocol lines against the protocol's JSON Schema with the `jsonschema`
package, independently of the gateway's decoder (HealthgateAdapterTests).

usage: validate_adapter_lines.py SCHEMA.json < lines

Each input line is `adapterToGateway JSON` or `gatewayToAdapter JSON`; for each, one output line:
`valid`, or `invalid: <the validator's message>`.
"""
import json
import sys

import jsonschema


def main():
    with open(sys.argv[1]) as file:
        schema = json.load(file)
    validators = {}
    for direction in ("adapterToGateway", "gatewayToAdapter"):
        part = dict(schema["$defs"][direction])
        part["$schema"] = schema["$schema"]
        jsonschema.Draft202012Validator.check_schema(part)
        validators[direction] = jsonschema.Draft202012Validator(part)
    for line in sys.stdin:
        direction, _, text = line.rstrip("\n").partition(" ")
        errors = list(validators[direction].iter_errors(json.loads(text)))
        print("valid" if not errors else "invalid: " + errors[0].message.replace("\n", " "))


if __name__ == "__main__":
    main()
