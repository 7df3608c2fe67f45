"""Structural pattern matching: sequence, mapping, class, literal, capture, wildcard, guard and
or-patterns over values the frame gets and makes: MATCH_SEQUENCE, MATCH_MAPPING, GET_LEN,
MATCH_KEYS and MATCH_CLASS, each relying on what it read (a class, a length, keys)."""
import dataclasses
from runner import case, changes, finish
import symtrace as st

x = st.randn(2, 3)


@dataclasses.dataclass
class Point:
    x: float
    y: float


class Tagged:
    __match_args__ = ("tag", "value")

    def __init__(self, tag, value):
        self.tag = tag
        self.value = value


def sequences(t, spec):
    match spec:
        case []:
            return t
        case [n]:
            return t * n
        case [first, *rest] if len(rest) > 1:
            return t + first + sum(rest)
        case (a, b):
            return t * a - b
    return None


def mappings(t, config):
    match config:
        case {"scale": s, "shift": b, **rest}:
            return t * s + b, sorted(rest)
        case {"scale": s}:
            return t * s, None
        case _:
            return t, None


def classes(t, p):
    match p:
        case Point(x=0, y=y):
            return t * y
        case Point(px, py) if px > py:
            return t * px
        case Tagged("neg", v):
            return -t * v
        case Tagged(tag=tag, value=v):
            return t + v, tag
        case int(n) | float(n):
            return t + n
        case str() as name:
            return t, name
    return None


def on_tensors(t, items):
    # The subject made here: a tuple of tensors and ints, matched by structure.
    match (t.sum(), items):
        case (s, [a, b, *_]):
            return s * a + b
        case (s, _):
            return s


# A case that returns the argument as it is captures no op: no graph.
for spec, graphs in (([], 0), ([2.0], 1), ([1.0, 2.0, 3.0], 1), ((2.0, 1.0), 1)):
    case(sequences, x, spec, graphs=graphs)
for config, graphs in (({"scale": 2.0, "shift": 1.0, "z": 0, "a": 1}, 1), ({"scale": 3.0}, 1), ({"other": 1}, 0)):
    case(mappings, x, config, graphs=graphs)
for p, graphs in ((Point(0, 2.0), 1), (Point(3.0, 1.0), 1), (Tagged("neg", 2.0), 1), (Tagged("pos", 1.5), 1),
                  (4, 1), (2.5, 1), ("name", 0), (Point(1.0, 2.0), 0)):
    case(classes, x, p, graphs=graphs)
case(on_tensors, x, [2.0, 1.0, 0.0])
case(on_tensors, x, 5)
pair = [2.0, 1.0]
changes(sequences, x, pair, change=lambda: pair.append(4.0))
config = {"scale": 2.0, "shift": 1.0}
changes(mappings, x, config, change=lambda: config.pop("shift"))
tagged = Tagged("neg", 2.0)
changes(classes, x, tagged, change=lambda: setattr(tagged, "tag", "pos"))
point = Point(0, 2.0)
changes(classes, x, point, change=lambda: setattr(point, "x", 5.0))
finish()
