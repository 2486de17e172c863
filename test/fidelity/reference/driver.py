"""Runs one conversation with AutoGRAMS 0.1 itself, for meta-agent's differential test.

    python3 driver.py REFERENCE_DIR SCENARIO_JSON OUTPUT_JSON

The scenario names a spreadsheet, a rules file (AUTOGRAMS_STUB_SCRIPT), the user's replies ("" lets
the agent speak first) and, optionally, AutogramConfig's arguments. The output holds the agent's
replies, every model call AutoGRAMS made, the nodes it went through and the error that stopped it, if
one did (loading the spreadsheet included).
"""
import contextlib
import io
import json
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
reference, scenario_path, output_path = sys.argv[1:4]
sys.path[:0] = [os.path.join(here, "stubs"), reference]

with open(scenario_path, encoding="utf-8") as handle:
    scenario = json.load(handle)
os.environ["AUTOGRAMS_STUB_SCRIPT"] = scenario["script"]

# AutoGRAMS prints as it loads and as it runs; only the output file is read.
with contextlib.redirect_stdout(io.StringIO()):
    import openai
    from autograms import AutogramConfig, read_autogram

    replies = []
    memory = None
    error = None
    try:
        config = AutogramConfig(**scenario.get("config", {}))
        autogram = read_autogram(scenario["csv"], autogram_config=config, api_keys={"openai": "not-a-key"})
        for text in scenario["replies"]:
            reply, memory = autogram.reply(text, memory_object=memory)
            replies.append(reply)
    except Exception as exc:  # reported to the test, which shows it
        error = str(exc)

with open(output_path, "w", encoding="utf-8") as handle:
    json.dump({
        "replies": replies,
        "calls": openai.CALLS,
        "trajectory": [step["state"] for step in memory.memory_dict["state_trajectory"]] if memory else [],
        "error": error,
    }, handle)
