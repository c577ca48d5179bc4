#!/usr/bin/env python3
"""Checks, from outside, what the consent API says of one consent request (docs/auditoria.md):

1. its receipt (GET /api/solicitacao-consentimento/{id}/recibo): a compact JWS whose EdDSA
   signature verifies with the key of its `kid` in GET /.well-known/jwks.json;
2. the latest checkpoint of the company's log (a C2SP signed note, as GET .../provas gives it):
   its signature verifies with a published key (matched by the C2SP key hash);
3. each of the request's log entries: its RFC 9162 inclusion proof leads to that checkpoint's root.

A key the JWKS marks `"ambiente": "sandbox"` signs only the sandbox companies' receipts and
checkpoints: it is refused (and so is a receipt whose payload says `"ambiente": "sandbox"`) unless
`--sandbox` says the request is a sandbox's; with `--sandbox`, only the sandbox key is accepted.

Standard library and `cryptography` only. Usage:

    CONSENT_API_KEY=cak_... python3 scripts/verify_audit.py --url http://127.0.0.1:8080 --id <id>

Exit 0 when everything verifies; 1 (with the reason) otherwise.
"""

import argparse
import base64
import hashlib
import json
import os
import sys
import urllib.error
import urllib.request

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey


def get(url, key=None):
    request = urllib.request.Request(url, headers={"Accept": "application/json"})
    if key:
        request.add_header("Api-Key", key)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.loads(response.read())
    except urllib.error.HTTPError as e:
        try:
            why = json.loads(e.read()).get("mensagem")
        except ValueError:
            why = None
        fail(f"GET {url} answered {e.code}" + (f": {why}" if why else ""))


def b64url(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def node(left, right):
    return hashlib.sha256(b"\x01" + left + right).digest()


def root_from_inclusion(index, size, leaf, proof):
    """RFC 9162, 2.1.3.2."""
    if index >= size:
        return None
    fn, sn, r = index, size - 1, leaf
    for p in proof:
        if sn == 0:
            return None
        if fn & 1 or fn == sn:
            r = node(p, r)
            while not fn & 1 and fn != 0:
                fn >>= 1
                sn >>= 1
        else:
            r = node(r, p)
        fn >>= 1
        sn >>= 1
    return r if sn == 0 else None


def key_hash(name, public_key):
    """C2SP signed-note key hash of an Ed25519 key."""
    return hashlib.sha256(name.encode() + b"\n\x01" + public_key).digest()[:4]


def fail(why):
    print(f"FAILED: {why}")
    sys.exit(1)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", required=True, help="the API's base URL")
    parser.add_argument("--id", required=True, help="the consent request's id")
    parser.add_argument(
        "--sandbox",
        action="store_true",
        help="the request is a sandbox company's (cak_test_ key): accept the sandbox key only",
    )
    args = parser.parse_args()
    key = os.environ.get("CONSENT_API_KEY")
    if not key:
        fail("set CONSENT_API_KEY to the company's API key")
    base = args.url.rstrip("/")

    # only the keys that sign for this kind of company: a sandbox key never vouches for a real
    # company (JWKS without the member: production keys)
    wanted = "sandbox" if args.sandbox else "producao"
    published = get(f"{base}/.well-known/jwks.json")["keys"]
    keys = {k["kid"]: b64url(k["x"]) for k in published if k.get("ambiente", "producao") == wanted}
    others = {k["kid"] for k in published} - set(keys)

    # 1. the receipt
    receipt = get(f"{base}/api/solicitacao-consentimento/{args.id}/recibo", key)["data"]["recibo"]
    header_b64, payload_b64, signature_b64 = receipt.split(".")
    header = json.loads(b64url(header_b64))
    if header.get("kid") in others:
        fail(f"receipt signed by kid {header['kid']}, which is not a {wanted} key (--sandbox for a sandbox's request)")
    if header.get("alg") != "EdDSA" or header.get("kid") not in keys:
        fail(f"receipt header {header}: not EdDSA with a published kid")
    try:
        Ed25519PublicKey.from_public_bytes(keys[header["kid"]]).verify(
            b64url(signature_b64), f"{header_b64}.{payload_b64}".encode()
        )
    except InvalidSignature:
        fail("receipt signature does not verify")
    payload = json.loads(b64url(payload_b64))
    if payload.get("id") != args.id or "cpfTitular" in payload:
        fail(f"receipt payload is not this request's (or carries the CPF): {payload}")
    if payload.get("ambiente", "producao") != wanted:
        fail(f"the receipt says ambiente {payload.get('ambiente')}, not {wanted}")
    print(f"receipt: signature valid (kid {header['kid']}, status {payload['status']}, indiceLog {payload['indiceLog']})")
    # a receipt no checkpoint backs proves nothing yet: its last entry must be in the tree
    if payload.get("indiceLog") is None:
        fail("the receipt's indiceLog is null: no checkpoint covers the request's last entry yet")

    # 2. the checkpoint
    proofs = get(f"{base}/api/solicitacao-consentimento/{args.id}/provas", key)["data"]
    note = proofs["checkpoint"]
    if not note:
        fail("no checkpoint yet: try again after APP__AUDITORIA__CHECKPOINT_SECONDS")
    text, _, signatures = note.partition("\n\n")
    text += "\n"
    origin, size, root_b64 = text.splitlines()
    size, root = int(size), base64.b64decode(root_b64)
    verified = False
    for line in signatures.splitlines():
        if not line.startswith("\u2014 "):
            continue
        name, blob = line[2:].split(" ")
        blob = base64.b64decode(blob)
        for public_key in keys.values():
            if key_hash(name, public_key) != blob[:4]:
                continue
            try:
                Ed25519PublicKey.from_public_bytes(public_key).verify(blob[4:], text.encode())
                verified = True
            except InvalidSignature:
                pass
    if not verified:
        fail(f"checkpoint signature does not verify with a published {wanted} key")
    print(f"checkpoint: signature valid ({origin}, size {size})")

    # 3. the entries' inclusion proofs
    entries = proofs["entradas"]
    for item in entries:
        entry = base64.b64decode(item["entrada"])
        leaf = hashlib.sha256(b"\x00" + entry).digest()
        path = [base64.b64decode(h) for h in item["provaInclusao"]]
        if root_from_inclusion(item["indice"], size, leaf, path) != root:
            fail(f"entry {item['indice']} is not in the checkpoint's tree")
        if json.loads(entry)["id"] != args.id:
            fail(f"entry {item['indice']} is another request's")
    if not entries:
        fail("no entry of the request is proven: the log does not back it")
    if payload["indiceLog"] not in [item["indice"] for item in entries]:
        fail(f"the receipt's indiceLog {payload['indiceLog']} is not one of the request's proven entries")
    print(f"inclusion: {len(entries)} entries proven")


if __name__ == "__main__":
    main()
