"""Calls functions of a spreadsheet with AutoGRAMS 0.1 itself, for meta-agent's differential test.

    python3 call.py REFERENCE_DIR SPREADSHEET_CSV CALLS_JSON OUTPUT_JSON

CALLS_JSON is a list of [function, arguments]; each call runs through Autogram.apply_fn (autogram.py)
as a local function, and the output lists, per call, the value it returned or the error it raised.
"""
import contextlib
import io
import json
import os
import sys
import time

here = os.path.dirname(os.path.abspath(__file__))
reference, csv, calls_path, output_path = sys.argv[1:5]
sys.path[:0] = [os.path.join(here, "stubs"), reference]
os.environ.setdefault("AUTOGRAMS_STUB_SCRIPT", os.devnull)

with open(calls_path, encoding="utf-8") as handle:
    calls = json.load(handle)

results = []
# AutoGRAMS prints as it loads and as it runs (a graph's print() too); only the output file is read.
with contextlib.redirect_stdout(io.StringIO()):
    from autograms import read_autogram

    autogram = read_autogram(csv, api_keys={"openai": "not-a-key"})
    for function, args in calls:
        started = time.perf_counter()
        try:
            result = {"value": autogram.apply_fn(function + "()", args)}
        except Exception as exc:  # reported to the test, which shows it
            result = {"error": str(exc)}
        result["ms"] = (time.perf_counter() - started) * 1000
        results.append(result)

with open(output_path, "w", encoding="utf-8") as handle:
    json.dump(results, handle)
