#!/usr/bin/env python3
"""Makes hostile or damaged variants of a ciq pack for tests.

  repack.py IN OUT replace OLD NEW   body edit, checksum recomputed (a "valid" hostile pack);
                                     a literal \\n in NEW is a line break, \\xNN that byte
                                     (\\x1b: ESC)
  repack.py IN OUT tamper OLD NEW    body edit, checksum left stale
  repack.py IN OUT truncate N        keep the first N bytes
  repack.py IN OUT bigblob N         add an N-byte blob (digest and checksum valid)
  repack.py IN OUT mark-tuned OLD NEW  make every entry a verified tuning result (10 %
                                     gain) with OLD replaced by NEW, checksum valid
"""
import base64
import hashlib
import re
import sys

src, dst, op = sys.argv[1:4]
text = open(src, encoding="utf-8", errors="surrogateescape").read()
head, body = text.split("\n--- ", 1)
body = "--- " + body


def header(body, entries_delta=0, blobs_delta=0):
    lines = []
    for line in head.splitlines():
        if line.startswith("checksum = "):
            line = "checksum = sha256:" + hashlib.sha256(body.encode("utf-8", "surrogateescape")).hexdigest()
        elif line.startswith("blobs = "):
            line = f"blobs = {int(line.split('=')[1]) + blobs_delta}"
        lines.append(line)
    return "\n".join(lines) + "\n"


if op == "replace":
    new = re.sub(rb"\\x([0-9a-f]{2})", lambda m: bytes([int(m.group(1), 16)]), sys.argv[5].replace("\\n", "\n").encode())
    body = body.replace(sys.argv[4], new.decode("utf-8", "surrogateescape"))
    out = header(body) + body
elif op == "tamper":
    out = head + "\n" + body.replace(sys.argv[4], sys.argv[5])
elif op == "truncate":
    out = text[: int(sys.argv[4])]
elif op == "bigblob":
    data = b"x" * int(sys.argv[4])
    digest = hashlib.sha256(data).hexdigest()
    enc = base64.b64encode(data).decode()
    blob = f"--- blob {digest} {len(data)}\n" + "".join(enc[i:i + 76] + "\n" for i in range(0, len(enc), 76))
    body = body.replace("--- end\n", blob + "--- end\n")
    out = header(body, blobs_delta=1) + body
elif op == "mark-tuned":
    body = body.replace("source = ciq-cache put\n", "source = ciq-tuner 0.1.0\nresult = tuned\nbaseline0 = 2.0\ntuned0 = 1.8\n")
    body = body.replace(sys.argv[4], sys.argv[5])
    out = header(body) + body
else:
    sys.exit("unknown operation " + op)
open(dst, "w", encoding="utf-8", errors="surrogateescape").write(out)
