"""The common batch line, read a block of lines at a time without a JSON parser.

Nearly every line a CI writes is `{"ptx": "...", "inputs": {"a": "0x3f800000", "p": true}}`
as `json.dumps` spells it, maybe with other keys after the inputs (stored "outputs" among
them, which the answer replaces in place). One pattern finds every such line of a block
(one pass in C; no JSON object is built), and the inputs of the lines of one text are
read column by column. The pattern takes only what JSON reads, and writes back, exactly
as written (strings of printable ASCII without `"` or `\\`, hex or Boolean inputs, no
second "ptx", "inputs" or "outputs"), so the values it finds are the values
`json.loads` gives. A line of any other form, and every line of a text whose columns
the fast path does not take, is left to the JSON reader (`jsonl.py`), which answers it
the same way: this lane only saves time.
"""

from __future__ import annotations

import re

from ..sem.options import Options
from .batch import evaluate_columns

# Possessive repeats (`*+`): what follows each cannot start where it stops, so giving back
# is never needed, and not keeping the places to give back to makes the pass a third faster.
_STRING = r'[ !#-\[\]-~]*+'  # printable ASCII but `"` and `\`: JSON reads it as written
_NAME = r'[A-Za-z_][A-Za-z0-9_]*+'
_INPUT = rf'"{_NAME}": (?:"0x[0-9A-Fa-f]++"|true|false)'
# a value JSON writes back as it reads it (not -0, which it reads as 0)
_VALUE = rf'(?:"{_STRING}"|0|-?[1-9][0-9]{{0,17}}|true|false|null)'
_OTHER = rf'"(?!(?:ptx|inputs|file|options|outputs)"){_NAME}": {_VALUE}'  # not read twice
_STORED = rf'{{(?:"{_STRING}": {_VALUE}(?:, "{_STRING}": {_VALUE})*+)?}}'  # replaced in place
# one match a line (a line of another form matches the empty text): its text, its inputs,
# and where it has stored outputs, its members before them, them and its members after
_LINE = re.compile(rf'^(?:{{"ptx": "({_STRING})", "inputs": {{((?:{_INPUT}(?:, {_INPUT})*+)?)}}'
                   rf'((?:, {_OTHER})*+)(?:, "outputs": ({_STORED})((?:, {_OTHER})*+))?}}'
                   rf'|[^\n]*+)$', re.MULTILINE)


def plain_answers(block: str, count: int, opts: Options) -> list[str | None]:
    """The answer to each of the `count` lines of `block` (joined by newlines): the line
    with `"outputs": {...}` added at the end (or its stored outputs replaced, as the
    JSON reader writes the line back), where it is plain and the fast path takes its
    text; else None."""
    answers: list[str | None] = [None] * count
    found = _LINE.findall(block)
    if len(found) != count:  # a line held a newline
        return answers
    texts: dict[str, tuple[list[int], list[str]]] = {}  # each text's lines and inputs
    for i, (ptx, inputs, *_) in enumerate(found):
        if ptx:
            if (group := texts.get(ptx)) is None:
                texts[ptx] = group = ([], [])
            group[0].append(i)
            group[1].append(inputs)
    tables = {ptx: (indices, table) for ptx, (indices, inputs) in texts.items()
              if (table := _table(inputs)) is not None}
    evaluate_columns(tables, opts, answers)
    heads = (block + "\n").split("}\n")  # each line but its closing brace, where all end in one
    if len(heads) != count + 1:
        heads = [line[:-1] for line in block.split("\n")]
    for i, outputs in enumerate(answers):
        if outputs is not None:
            if found[i][3]:  # stored outputs
                answers[i] = _REPLACED % (*found[i][:3], outputs, found[i][4])
            else:
                answers[i] = '%s, "outputs": %s}' % (heads[i], outputs)  # noqa: UP031
    return answers


_REPLACED = '{"ptx": "%s", "inputs": {%s}%s, "outputs": %s%s}'  # a line as JSON writes it


def _table(inputs: list[str]) -> dict[str, list] | None:
    """The inputs of a text's lines by name, column by column (a hex string as written,
    less its quotes, or a boolean); None where the lines do not all name the same inputs in the same
    order, or an input is hex on one line and Boolean on another. A name given twice
    takes its last value, as JSON reads it."""
    per_line = inputs[0].count('": ')
    if not per_line:
        return None if any(inputs) else {}
    # the pattern leaves `": ` only after a name, `, ` only between two inputs
    tokens = ", ".join(inputs).replace('": ', ", ").split(", ")
    names, values = tokens[0::2], tokens[1::2]  # names with their opening quote
    first = names[:per_line]
    if names != first * len(inputs):
        return None
    table = {}
    for k, name in enumerate(first):
        column = values[k::per_line]
        flags = column.count("true") + column.count("false")
        if not flags:  # every value a hex string: as written, less its quotes
            table[name[1:]] = "\0".join(column).replace('"', "").split("\0")
        elif flags == len(column):
            table[name[1:]] = list(map("true".__eq__, column))
        else:
            return None
    return table
