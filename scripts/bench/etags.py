#!/usr/bin/env python3
"""The ETag each company key gets for GET /api/casos-de-uso, for the list_etag scenario of
`make bench`: one line per line of KEYS, in order, written to OUT. One keep-alive connection.

  etags.py API_URL KEYS OUT

Exits 1 with one line on stderr if an answer is not 200 or has no ETag header.
"""
import http.client, sys, urllib.parse

url, keys_file, out = sys.argv[1:4]
u = urllib.parse.urlsplit(url)
conn = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
tags = []
for n, key in enumerate((l.strip() for l in open(keys_file) if l.strip()), 1):
    conn.request("GET", "/api/casos-de-uso", headers={"Api-Key": key})
    r = conn.getresponse()
    r.read()
    tag = r.getheader("ETag")
    if r.status != 200 or not tag:
        sys.exit(f"key {n}: answered {r.status}, ETag {tag!r}")
    tags.append(tag)
with open(out, "w") as f:
    f.write("\n".join(tags) + "\n")
