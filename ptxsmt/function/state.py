"""What one path through a function has computed, and the merge of paths at a join.

Branches only go forward (loops are refused), so the blocks form a DAG and every path
reaching a label is finished when the label is reached. A path carries `live`, the
condition on the inputs under which execution takes it; paths meeting at a label are
exclusive, so their merge picks each value by the condition of the path it came from.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import z3

from .memory import initial


@dataclass(frozen=True)
class State:
    live: z3.BoolRef
    registers: dict[str, z3.ExprRef]  # by name without `%`
    memory: dict[str, z3.ArrayRef]  # state space -> bytes
    returns: dict[str, z3.ExprRef]  # `st.param` to a return parameter: name -> value

    def when(self, condition: z3.BoolRef) -> State:
        """This path, taken only where `condition` also holds (a branch's side)."""
        return replace(self, live=z3.simplify(z3.And(self.live, condition)))


def merge(paths: list[State]) -> State:
    """One state for paths that meet. Memory a path has not touched is the initial
    memory; a return value a path has not written is `unwritten` there (as in
    `effects.set_return`: a value neither side chooses). A register written on some
    paths only (defined on one side of a branch) keeps what those paths hold: reading it
    where no path wrote it is undefined in PTX, and any value is a correct reading."""
    if len(paths) == 1:
        return paths[0]
    widths = {k: v.size() for p in paths for k, v in p.returns.items()}
    return State(z3.simplify(z3.Or([p.live for p in paths])),
                 _merged([(p.live, p.registers) for p in paths]),
                 _merged([(p.live, p.memory) for p in paths], initial),
                 _merged([(p.live, p.returns) for p in paths],
                         lambda k: z3.BitVec(f"{k} unwritten", widths[k])))


def _merged(sides: list[tuple[z3.BoolRef, dict]], default=None) -> dict:
    out = {}
    for key in dict.fromkeys(k for _, values in sides for k in values):
        held = [(live, values[key] if key in values else default(key))
                for live, values in sides if key in values or default]
        value = held[-1][1]
        for live, v in reversed(held[:-1]):
            value = value if v.eq(value) else z3.If(live, v, value)
        out[key] = value
    return out
