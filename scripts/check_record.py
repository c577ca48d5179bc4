#!/usr/bin/env python3
"""Checks a consent record in the ISO/IEC TS 27560 form as the service answers it
(GET /api/solicitacao-consentimento/{id}/registro; docs/records.md):

1. fetches the record (API key from CONSENT_API_KEY) and expands it with PyLD, loading its
   @context from the service itself and refusing any other document (no fetch elsewhere);
2. checks that every term of the expanded record (each property, each @type, and each IRI value
   in DPV's namespaces) is an IRI of the W3C DPV 2.3 vocabulary files (dpv.ttl, pd.ttl,
   dpv-27560.ttl, read with rdflib from --vocab), so a self-made context cannot pass: a DPV
   namespace IRI must be defined there (a subject of the files); another IRI must occur in
   them, or be one of the DCMI terms the guide's mandatory-field table names (dct:identifier,
   dct:language, dct:valid, dct:date), or an XML Schema datatype;
3. validates the record with pySHACL against --shapes (tests/shapes/consent-record-27560.ttl).

Exit 0 and "record: valid" when all pass; non-zero with every problem otherwise.
Usage: check_record.py --url BASE --id REQUEST_ID --vocab DIR --shapes FILE
"""

import argparse
import json
import os
import sys
import urllib.request

from pyld import jsonld
from pyshacl import validate
from rdflib import Graph, URIRef

DPV_NAMESPACES = (
    "https://w3id.org/dpv#",
    "https://w3id.org/dpv/pd#",
    "https://w3id.org/dpv/schema/dpv-27560#",
)
# The guide's table ("7.2 ISO 27560:2023, EU GDPR, and DPV") names these DCMI terms for
# mandatory rows: record id / receipt id / pii principal id / party id (dct:identifier),
# language (dct:language), validity duration (dct:valid), event time (dct:date).
GUIDE_DCMI_TERMS = {
    "http://purl.org/dc/terms/identifier",
    "http://purl.org/dc/terms/language",
    "http://purl.org/dc/terms/valid",
    "http://purl.org/dc/terms/date",
}
XSD = "http://www.w3.org/2001/XMLSchema#"
RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"


def fetch(url, key=None, accept="application/ld+json"):
    req = urllib.request.Request(url, headers={"Accept": accept})
    if key:
        req.add_header("Api-Key", key)
    with urllib.request.urlopen(req, timeout=30) as r:
        return r.status, r.headers.get("Content-Type", ""), r.read().decode("utf-8")


def loader_for(base):
    """A PyLD document loader that loads only documents of the service at `base`."""

    def load(url, options=None):
        if not url.startswith(base + "/"):
            raise jsonld.JsonLdError(
                "refusing to load a document from outside the service",
                "jsonld.LoadDocumentError",
                {"url": url},
                code="loading document failed",
            )
        _, content_type, body = fetch(url)
        return {
            "contentType": content_type.split(";")[0].strip(),
            "contextUrl": None,
            "documentUrl": url,
            "document": json.loads(body),
        }

    return load


def vocabulary(directory):
    graph = Graph()
    for name in ("dpv.ttl", "pd.ttl", "dpv-27560.ttl"):
        graph.parse(os.path.join(directory, name), format="turtle")
    defined = {str(s) for s in graph.subjects() if isinstance(s, URIRef)}
    occurring = set(defined)
    for _, p, o in graph:
        occurring.add(str(p))
        if isinstance(o, URIRef):
            occurring.add(str(o))
    return defined, occurring


def terms(node, found):
    """Every property IRI, @type IRI and IRI value of the expanded document."""
    if isinstance(node, list):
        for item in node:
            terms(item, found)
        return
    if not isinstance(node, dict):
        return
    for key, value in node.items():
        if key == "@type":
            for t in value if isinstance(value, list) else [value]:
                found.add(("type", t))
        elif key == "@id":
            if any(value.startswith(ns) for ns in DPV_NAMESPACES):
                found.add(("value", value))
        elif key == "@value":
            continue
        elif not key.startswith("@"):
            found.add(("property", key))
            terms(value, found)
        else:
            terms(value, found)


def accepted(iri, defined, occurring):
    if any(iri.startswith(ns) for ns in DPV_NAMESPACES):
        return iri in defined
    return iri in occurring or iri in GUIDE_DCMI_TERMS or iri.startswith(XSD)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--id", required=True)
    parser.add_argument("--vocab", required=True)
    parser.add_argument("--shapes", required=True)
    args = parser.parse_args()
    base = args.url.rstrip("/")
    key = os.environ.get("CONSENT_API_KEY")

    status, content_type, body = fetch(
        f"{base}/api/solicitacao-consentimento/{args.id}/registro", key
    )
    problems = []
    if not content_type.startswith("application/ld+json"):
        problems.append(f"media type {content_type!r}, not application/ld+json")
    record = json.loads(body)
    context = record.get("@context")
    if not isinstance(context, str) or not context.startswith(base + "/"):
        problems.append(f"@context {context!r} is not a document of the service")

    expanded = jsonld.expand(record, {"documentLoader": loader_for(base)})
    defined, occurring = vocabulary(args.vocab)
    found = set()
    terms(expanded, found)
    for kind, iri in sorted(found):
        if not accepted(iri, defined, occurring):
            problems.append(f"{kind} {iri} is not a term of DPV 2.3's vocabulary files")
    print(f"terms: {len(found)} checked")

    data = Graph()
    data.parse(data=json.dumps(expanded), format="json-ld")
    shapes = Graph()
    shapes.parse(args.shapes, format="turtle")
    conforms, _, text = validate(data, shacl_graph=shapes, inference="none")
    if not conforms:
        problems.append("SHACL: " + text)

    if problems:
        for p in problems:
            print(p, file=sys.stderr)
        sys.exit(1)
    print("record: valid")


if __name__ == "__main__":
    main()
