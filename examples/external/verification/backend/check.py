"""Example checker: cvc5, a solver independent of the producer's z3,
re-decides every approved obligation; the checker also re-derives the
evidence's binding to the frozen specification and the evidence digest,
then writes the bound receipt itself.
Invoked as: python3 check.py REQUEST.json (the request names the paths)."""
import hashlib
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import smtlib  # noqa: E402

CVC5 = "/usr/bin/cvc5"  # pinned as a trusted tool dependency
EVIDENCE_USED = ["results.json", "z3.log"]


def decide(text):
    try:
        out = subprocess.run([CVC5, "--lang=smt2"], input=text, capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        return "unknown"
    answer = out.stdout.strip().splitlines()[-1] if out.stdout.strip() else ""
    return {"unsat": "accepted", "sat": "rejected"}.get(answer, "unknown")


def main():
    request = json.load(open(sys.argv[1]))
    paths = request["paths"]
    spec_path = os.path.join(paths["snapshot"], request["specification"]["path"])
    spec_digest = smtlib.sha256_file(spec_path)
    pairs = [(e["path"], smtlib.sha256_file(os.path.join(paths["evidence"], e["path"])))
             for e in request["evidence"]]
    evidence_digest = smtlib.evidence_digest(pairs)
    results = json.load(open(os.path.join(paths["evidence"], "results.json")))
    claimed = {o["name"]: o for o in results["obligations"]}
    prelude, blocks = smtlib.obligations(open(spec_path).read())
    bound = (spec_digest == request["specification_digest"] == results["specification_sha256"]
             and evidence_digest == request["evidence_digest"])
    obligations = []
    for name in request["obligations"]:
        text = smtlib.script(prelude, blocks.get(name, ""))
        claim = claimed.get(name, {})
        if not bound or name not in blocks or claim.get("script_sha256") != hashlib.sha256(text.encode()).hexdigest():
            result = "rejected"  # the evidence is not about this specification
        elif claim.get("status") != "unsat":
            result = "unknown"   # the producer did not claim a proof
        else:
            result = decide(text)
        obligations.append({"name": name, "result": result, "evidence": EVIDENCE_USED})
    results_seen = [o["result"] for o in obligations]
    verdict = ("rejected" if "rejected" in results_seen else "unknown" if "unknown" in results_seen else "accepted")
    receipt = {
        "schema_version": 1,
        "job_id": request["job_id"],
        "run_id": request["run_id"],
        "check_id": request["check_id"],
        "check_digest": request["check_digest"],
        "specification_digest": spec_digest,
        "identity": request["identity"],
        "evidence_digest": evidence_digest,
        "verdict": verdict,
        "obligations": obligations,
    }
    with open(paths["receipt"], "w") as f:
        json.dump(receipt, f, indent=2)
        f.write("\n")


if __name__ == "__main__":
    main()
