"""Regenerate the stored reference results (``tests/reference/*.json``).

Run once, on the code whose results every later change must keep bit for bit::

    python tests/reference/make_references.py

Each reference is one search of one method at small settings (every swarm method of the five
papers and every baseline, on SRBCT and on a synthetic planted-signal matrix), plus one small
job per protocol. ``tests/test_reference_results.py`` recomputes them and compares everything
but wall-clock seconds.
"""

import json
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))

from reference_cases import JOB_CASES, SEARCH_CASES, job_document, search_document  # noqa: E402


def main():
    for name, case in SEARCH_CASES.items():
        with open(os.path.join(HERE, f"search-{name}.json"), "w") as out:
            json.dump(search_document(case), out, indent=1, sort_keys=True)
            out.write("\n")
    for name, case in JOB_CASES.items():
        with tempfile.TemporaryDirectory() as folder:
            document = job_document(case, folder)
        with open(os.path.join(HERE, f"job-{name}.json"), "w") as out:
            json.dump(document, out, indent=1, sort_keys=True)
            out.write("\n")


if __name__ == "__main__":
    main()
