"""Shared by the example producer and checker: split a specification into
its named obligations, and hash files the way vkit's evidence digest does."""
import hashlib


def obligations(spec_text):
    """Returns (prelude, {name: block}) from '; obligation: NAME' markers."""
    prelude, blocks, current = [], {}, None
    for line in spec_text.splitlines(keepends=True):
        if line.startswith("; obligation:"):
            current = line.split(":", 1)[1].strip()
            if current in blocks:
                raise ValueError("obligation %s appears twice" % current)
            blocks[current] = []
        elif current is None:
            prelude.append(line)
        else:
            blocks[current].append(line)
    return "".join(prelude), {k: "".join(v) for k, v in blocks.items()}


def script(prelude, block):
    return prelude + block + "(check-sat)\n"


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def evidence_digest(pairs):
    """vkit's evidence digest: SHA-256 over sorted 'path NUL sha256 LF' records."""
    h = hashlib.sha256()
    for path, digest in sorted(pairs, key=lambda p: p[0].encode()):
        h.update(path.encode() + b"\0" + digest.encode() + b"\n")
    return h.hexdigest()
