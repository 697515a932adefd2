"""Bounds on what the model works out from hostile input: past them a value is unknown.

Every byte the linter reads may come from someone who wants the gate to hang or run out of
memory, so what the loaders and the model *derive* (an expanded variable, a number read from a
string, a nested JSON array) is bounded here, in one place, far above anything a real file holds.
"""

from __future__ import annotations

# An expanded ARG/ENV/shell variable longer than this is unknown: forty levels of
# ``A1=${A0}${A0}`` double the value each time (2^40 characters), and every file under the root
# is read for context, so one such file would take down runs that target other files.
MAX_VALUE_CHARS = 64 * 1024

# A number written with more digits than this is not a number the model uses (Python refuses to
# convert more than 4,300 digits, and no quantity, replica count or port needs a tenth of them).
MAX_NUMBER_DIGITS = 100

# JSON arrays (ENTRYPOINT ["..."]) nested deeper than this are not read as exec form.
MAX_JSON_DEPTH = 64
