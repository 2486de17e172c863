"""Compiles a Python program into an AutoGRAMS spreadsheet with AutoGRAMS 0.1's own compiler.

    python3 compile.py REFERENCE_DIR PROGRAM.py OUTPUT.csv

read_autogram compiles a .py file (process_autogram.py: AutogramCompiler, then update) and
write_autogram writes the compiled nodes as the CSV AutoGRAMS itself reads back.
"""
import contextlib
import io
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
reference, program, output = sys.argv[1:4]
sys.path[:0] = [os.path.join(here, "stubs"), reference]

with contextlib.redirect_stdout(io.StringIO()):
    from autograms import read_autogram, write_autogram

    write_autogram(read_autogram(program, api_keys={"openai": "not-a-key"}), output, allow_overwrite=True)
