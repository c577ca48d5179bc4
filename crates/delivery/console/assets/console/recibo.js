// The request page's receipt check (docs/console.md, "Receipts"), run in the browser from the
// public keys alone: the receipt's EdDSA signature with the key of its `kid` in
// /.well-known/jwks.json, the latest checkpoint's signature (a C2SP signed note) with a published
// key, and the RFC 9162 inclusion proof of the request's log entries in that checkpoint's tree.
// WebCrypto only (Ed25519 and SHA-256); no library, nothing from another host.
"use strict";
(function () {
  const button = document.getElementById("verificar-recibo");
  const out = document.getElementById("resultado-recibo");
  if (!button || !out) return;
  const id = button.dataset.solicitacao;
  const utf8 = new TextEncoder();

  const b64 = (s) => Uint8Array.from(atob(s), (c) => c.charCodeAt(0));
  const b64url = (s) =>
    b64(s.replace(/-/g, "+").replace(/_/g, "/") + "=".repeat((4 - (s.length % 4)) % 4));
  const concat = (...parts) => {
    const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    let at = 0;
    for (const p of parts) {
      out.set(p, at);
      at += p.length;
    }
    return out;
  };
  const equal = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);
  const sha256 = async (bytes) => new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  const node = (left, right) => sha256(concat(Uint8Array.of(1), left, right));

  async function ed25519(publicKey, signature, data) {
    const key = await crypto.subtle.importKey("raw", publicKey, { name: "Ed25519" }, false, [
      "verify",
    ]);
    return crypto.subtle.verify({ name: "Ed25519" }, key, signature, data);
  }

  // RFC 9162, 2.1.3.2: the root an inclusion proof leads to (null when it cannot).
  async function rootFromInclusion(index, size, leaf, proof) {
    if (index >= size) return null;
    let fn = index;
    let sn = size - 1;
    let r = leaf;
    for (const p of proof) {
      if (sn === 0) return null;
      if (fn % 2 === 1 || fn === sn) {
        r = await node(p, r);
        while (fn % 2 === 0 && fn !== 0) {
          fn = Math.floor(fn / 2);
          sn = Math.floor(sn / 2);
        }
      } else {
        r = await node(r, p);
      }
      fn = Math.floor(fn / 2);
      sn = Math.floor(sn / 2);
    }
    return sn === 0 ? r : null;
  }

  async function get(url) {
    const res = await fetch(url, {
      credentials: "same-origin",
      headers: { Accept: "application/json" },
    });
    if (!res.ok) throw new Error(`a leitura de ${url} respondeu HTTP ${res.status}`);
    return res.json();
  }

  async function verify() {
    const jwks = await get("/.well-known/jwks.json");
    const keys = new Map(jwks.keys.map((k) => [k.kid, b64url(k.x)]));
    const material = await get(`/console/solicitacoes/${id}/verificacao`);

    // 1. the receipt
    const [headerB64, payloadB64, signatureB64] = material.recibo.split(".");
    const header = JSON.parse(new TextDecoder().decode(b64url(headerB64)));
    const key = keys.get(header.kid);
    if (header.alg !== "EdDSA" || !key) throw new Error("o recibo não é EdDSA de uma chave publicada");
    const signed = utf8.encode(`${headerB64}.${payloadB64}`);
    if (!(await ed25519(key, b64url(signatureB64), signed))) {
      throw new Error("a assinatura do recibo não confere");
    }
    const payload = JSON.parse(new TextDecoder().decode(b64url(payloadB64)));
    if (payload.id !== id) throw new Error("o recibo é de outra solicitação");

    // 2. the checkpoint
    const note = material.checkpoint;
    if (!note) throw new Error("ainda não há checkpoint assinado; tente em instantes");
    const cut = note.indexOf("\n\n");
    const text = note.slice(0, cut + 1);
    const [origin, sizeText, rootB64] = text.trimEnd().split("\n");
    const size = Number(sizeText);
    const root = b64(rootB64);
    let checkpointOk = false;
    for (const line of note.slice(cut + 2).split("\n")) {
      if (!line.startsWith("\u2014 ")) continue;
      const [name, blobB64] = line.slice(2).split(" ");
      const blob = b64(blobB64);
      for (const publicKey of keys.values()) {
        const hash = (await sha256(concat(utf8.encode(`${name}\n`), Uint8Array.of(1), publicKey)))
          .slice(0, 4);
        if (!equal(hash, blob.slice(0, 4))) continue;
        if (await ed25519(publicKey, blob.slice(4), utf8.encode(text))) checkpointOk = true;
      }
    }
    if (!checkpointOk) throw new Error("a assinatura do checkpoint não confere com uma chave publicada");

    // 3. the entries' inclusion proofs, the receipt's among them
    let receiptEntry = false;
    for (const item of material.entradas) {
      const entry = b64(item.entrada);
      const leaf = await sha256(concat(Uint8Array.of(0), entry));
      const proof = item.provaInclusao.map(b64);
      const got = await rootFromInclusion(item.indice, size, leaf, proof);
      if (!got || !equal(got, root)) {
        throw new Error(`a entrada ${item.indice} não está na árvore do checkpoint`);
      }
      if (JSON.parse(new TextDecoder().decode(entry)).id !== id) {
        throw new Error(`a entrada ${item.indice} é de outra solicitação`);
      }
      if (item.indice === payload.indiceLog) receiptEntry = true;
    }
    if (!receiptEntry) {
      throw new Error("a entrada do recibo ainda não está no último checkpoint; tente em instantes");
    }
    return (
      `Recibo válido: assinado pela chave ${header.kid}, status ${payload.status}; ` +
      `entrada ${payload.indiceLog} incluída no checkpoint ${origin} de tamanho ${size}, ` +
      `cuja assinatura confere.`
    );
  }

  button.addEventListener("click", async () => {
    button.disabled = true;
    out.dataset.resultado = "";
    out.textContent = "Verificando…";
    try {
      out.textContent = await verify();
      out.dataset.resultado = "valido";
    } catch (e) {
      out.textContent = `Recibo não verificado: ${e.message}.`;
      out.dataset.resultado = "invalido";
    } finally {
      button.disabled = false;
    }
  });
})();
