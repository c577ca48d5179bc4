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

With `--pacote <dir>` it checks instead, with no network, an extracted evidence bundle of the
console (`GET /console/titulares/<token>/pacote`, docs/console.md): the checkpoint signed by a key
of the bundled `jwks.json` and cosigned by at least one witness of `testemunhas.txt` (C2SP
`cosignature/v1`), every receipt's signature against `jwks.json`, and every inclusion proof
against its checkpoint (each request's `provas.json` carries the one it proves against, which must
verify the same way). A record replaced by its error (`registro.erro.json`) is reported, not
failed: the README of the bundle says why it is missing.

Standard library and `cryptography` only. Usage:

    CONSENT_API_KEY=cak_... python3 scripts/verify_audit.py --url http://127.0.0.1:8080 --id <id>
    python3 scripts/verify_audit.py --pacote <extracted bundle>

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


def log_keys(published, wanted):
    """The JWKS keys that sign for `wanted` (producao or sandbox), and the other kids."""
    keys = {k["kid"]: b64url(k["x"]) for k in published if k.get("ambiente", "producao") == wanted}
    return keys, {k["kid"] for k in published} - set(keys)


def parse_vkey(text):
    """A witness's C2SP vkey `<name>+<hex key id>+<base64(0x04 || key)>`: (name, key id, key)."""
    parts = text.strip().split("+", 2)
    if len(parts) != 3:
        fail(f"not a verifier key: {text.strip()!r}")
    name, key_id, blob = parts
    blob = base64.b64decode(blob)
    if len(blob) != 33 or blob[0] != 0x04:
        fail(f"not a cosignature/v1 verifier key: {text.strip()!r}")
    public_key = blob[1:]
    if hashlib.sha256(name.encode() + b"\n\x04" + public_key).digest()[:4].hex() != key_id:
        fail(f"verifier key {name}: its key id is not its key's")
    return name, bytes.fromhex(key_id), public_key


def verify_note(note, keys, wanted, witnesses=None):
    """The checkpoint's (origin, size, root) once its log signature verifies with `keys` and,
    when `witnesses` is given, once at least one of them cosigned it; fails otherwise."""
    text, _, signatures = note.partition("\n\n")
    text += "\n"
    origin, size, root_b64 = text.splitlines()[:3]
    size, root = int(size), base64.b64decode(root_b64)
    verified = False
    cosigned_by = []
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
        for w_name, w_id, w_key in witnesses or []:
            if name != w_name or blob[:4] != w_id or len(blob) != 4 + 8 + 64:
                continue
            time = int.from_bytes(blob[4:12], "big")
            message = f"cosignature/v1\ntime {time}\n".encode() + text.encode()
            try:
                Ed25519PublicKey.from_public_bytes(w_key).verify(blob[12:], message)
                cosigned_by.append(name)
            except InvalidSignature:
                pass
    if not verified:
        fail(f"checkpoint signature does not verify with a published {wanted} key")
    if witnesses is not None and not cosigned_by:
        fail(f"checkpoint of size {size} has no valid cosignature of a witness of testemunhas.txt")
    return origin, size, root, cosigned_by


def verify_receipt(receipt, keys, others, wanted, request_id):
    """The receipt's payload once its signature verifies with the key of its kid."""
    header_b64, payload_b64, signature_b64 = receipt.strip().split(".")
    header = json.loads(b64url(header_b64))
    if header.get("kid") in others:
        fail(f"receipt of {request_id} signed by kid {header['kid']}, which is not a {wanted} key (--sandbox for a sandbox's request)")
    if header.get("alg") != "EdDSA" or header.get("kid") not in keys:
        fail(f"receipt of {request_id}: header {header} is not EdDSA with a published kid")
    try:
        Ed25519PublicKey.from_public_bytes(keys[header["kid"]]).verify(
            b64url(signature_b64), f"{header_b64}.{payload_b64}".encode()
        )
    except InvalidSignature:
        fail(f"receipt signature of {request_id} does not verify")
    payload = json.loads(b64url(payload_b64))
    if payload.get("id") != request_id or "cpfTitular" in payload:
        fail(f"receipt payload is not request {request_id}'s (or carries the CPF): {payload}")
    if payload.get("ambiente", "producao") != wanted:
        fail(f"the receipt of {request_id} says ambiente {payload.get('ambiente')}, not {wanted}")
    if payload.get("indiceLog") is None:
        fail(f"the receipt of {request_id} has indiceLog null: no checkpoint covers its last entry yet")
    return header, payload


def verify_inclusion(entries, size, root, request_id, log_index):
    """Each entry proven in the tree of (size, root), each of `request_id`, `log_index` among them."""
    for item in entries:
        entry = base64.b64decode(item["entrada"])
        leaf = hashlib.sha256(b"\x00" + entry).digest()
        path = [base64.b64decode(h) for h in item["provaInclusao"]]
        if root_from_inclusion(item["indice"], size, leaf, path) != root:
            fail(f"entry {item['indice']} of {request_id} is not in the checkpoint's tree")
        if json.loads(entry)["id"] != request_id:
            fail(f"entry {item['indice']} is another request's, not {request_id}'s")
    if not entries:
        fail(f"no entry of request {request_id} is proven: the log does not back it")
    if log_index not in [item["indice"] for item in entries]:
        fail(f"the receipt's indiceLog {log_index} of {request_id} is not one of its proven entries")


def read(path, what):
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except FileNotFoundError:
        fail(f"the bundle has no {what} ({path})")


def verify_bundle(directory, wanted):
    """Checks an extracted evidence bundle with no network (see the module's doc)."""
    keys, others = log_keys(json.loads(read(os.path.join(directory, "jwks.json"), "jwks.json"))["keys"], wanted)
    lines = read(os.path.join(directory, "testemunhas.txt"), "testemunhas.txt").splitlines()
    witnesses = [parse_vkey(line) for line in lines if line.strip()]
    if not witnesses:
        fail("testemunhas.txt lists no witness: the checkpoint cannot be shown cosigned")
    note = read(os.path.join(directory, "checkpoint.txt"), "checkpoint.txt")
    origin, size, _, cosigned_by = verify_note(note, keys, wanted, witnesses)
    print(f"checkpoint: signature valid ({origin}, size {size}), cosigned by {', '.join(cosigned_by)}")
    checked = {note: True}
    base = os.path.join(directory, "solicitacoes")
    ids = sorted(os.listdir(base)) if os.path.isdir(base) else []
    if not ids:
        fail("the bundle holds no request")
    for request_id in ids:
        folder = os.path.join(base, request_id)
        if not os.path.exists(os.path.join(folder, "recibo.jws")):
            why = ""
            if os.path.exists(os.path.join(folder, "recibo.erro.json")):
                why = ": " + json.loads(read(os.path.join(folder, "recibo.erro.json"), "error")).get("mensagem", "")
            fail(f"request {request_id} has no receipt{why}")
        _, payload = verify_receipt(read(os.path.join(folder, "recibo.jws"), "receipt"), keys, others, wanted, request_id)
        proofs = json.loads(read(os.path.join(folder, "provas.json"), f"proofs of {request_id}"))["data"]
        request_note = proofs.get("checkpoint")
        if not request_note:
            fail(f"the proofs of {request_id} carry no checkpoint")
        _, request_size, request_root, _ = verify_note(request_note, keys, wanted, witnesses)
        checked[request_note] = True
        verify_inclusion(proofs["entradas"], request_size, request_root, request_id, payload["indiceLog"])
        record = "record present"
        if not os.path.exists(os.path.join(folder, "registro.jsonld")):
            error = json.loads(read(os.path.join(folder, "registro.erro.json"), f"record of {request_id}"))
            record = f"record missing ({error.get('mensagem')})"
        print(f"{request_id}: receipt valid (status {payload['status']}), {len(proofs['entradas'])} entries proven, {record}")
    print(f"bundle: {len(ids)} requests verified against {len(checked)} cosigned checkpoint(s)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", help="the API's base URL")
    parser.add_argument("--id", help="the consent request's id")
    parser.add_argument(
        "--pacote",
        help="an extracted evidence bundle of the console: checked offline, nothing fetched",
    )
    parser.add_argument(
        "--sandbox",
        action="store_true",
        help="the request is a sandbox company's (cak_test_ key): accept the sandbox key only",
    )
    args = parser.parse_args()
    wanted = "sandbox" if args.sandbox else "producao"
    if args.pacote:
        verify_bundle(args.pacote, wanted)
        return
    if not args.url or not args.id:
        fail("give --url and --id (or --pacote <dir>)")
    key = os.environ.get("CONSENT_API_KEY")
    if not key:
        fail("set CONSENT_API_KEY to the company's API key")
    base = args.url.rstrip("/")

    # only the keys that sign for this kind of company: a sandbox key never vouches for a real
    # company (JWKS without the member: production keys)
    keys, others = log_keys(get(f"{base}/.well-known/jwks.json")["keys"], wanted)

    # 1. the receipt (a receipt no checkpoint backs proves nothing yet: verify_receipt requires
    # its indiceLog)
    receipt = get(f"{base}/api/solicitacao-consentimento/{args.id}/recibo", key)["data"]["recibo"]
    header, payload = verify_receipt(receipt, keys, others, wanted, args.id)
    print(f"receipt: signature valid (kid {header['kid']}, status {payload['status']}, indiceLog {payload['indiceLog']})")

    # 2. the checkpoint
    proofs = get(f"{base}/api/solicitacao-consentimento/{args.id}/provas", key)["data"]
    note = proofs["checkpoint"]
    if not note:
        fail("no checkpoint yet: try again after APP__AUDITORIA__CHECKPOINT_SECONDS")
    origin, size, root, _ = verify_note(note, keys, wanted)
    print(f"checkpoint: signature valid ({origin}, size {size})")

    # 3. the entries' inclusion proofs
    entries = proofs["entradas"]
    verify_inclusion(entries, size, root, args.id, payload["indiceLog"])
    print(f"inclusion: {len(entries)} entries proven")


if __name__ == "__main__":
    main()
