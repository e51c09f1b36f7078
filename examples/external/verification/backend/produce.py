"""Example producer: z3 decides every approved obligation of the frozen
specification and writes the declared evidence (results.json, z3.log).
Invoked as: python3 produce.py REQUEST.json (the request names the paths)."""
import hashlib
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import smtlib  # noqa: E402

Z3 = "/usr/bin/z3"  # pinned as a trusted tool dependency


def main():
    request = json.load(open(sys.argv[1]))
    paths = request["paths"]
    spec_path = os.path.join(paths["snapshot"], request["specification"]["path"])
    spec_text = open(spec_path).read()
    prelude, blocks = smtlib.obligations(spec_text)
    version = subprocess.run([Z3, "-version"], capture_output=True, text=True).stdout.strip()
    results, log = [], []
    for name in request["obligations"]:
        text = smtlib.script(prelude, blocks[name])
        out = subprocess.run([Z3, "-smt2", "-in"], input=text, capture_output=True, text=True, timeout=60)
        status = out.stdout.strip().splitlines()[-1] if out.stdout.strip() else "error"
        results.append({"name": name, "status": status,
                        "script_sha256": hashlib.sha256(text.encode()).hexdigest()})
        log.append("== %s\n%s%s" % (name, out.stdout, out.stderr))
    evidence = paths["evidence"]
    with open(os.path.join(evidence, "results.json"), "w") as f:
        json.dump({"solver": version, "specification_sha256": smtlib.sha256_file(spec_path),
                   "obligations": results}, f, indent=2, sort_keys=True)
        f.write("\n")
    with open(os.path.join(evidence, "z3.log"), "w") as f:
        f.write("".join(log))


if __name__ == "__main__":
    main()
