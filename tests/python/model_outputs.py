"""Instances of classes written on dict that a traced call makes: a Hugging Face style
`ModelOutput` (a dataclass on `OrderedDict` with its own `__post_init__`, `__getitem__`,
`__setitem__` and `__setattr__`) made by an encoder and read by the model around it, an
`AttrDict` whose attributes are its entries, a plain subclass filled by `dict`'s own
`__init__`. Each stays in one graph and comes out as the same object it would be: its class,
its entries in order, its attributes, the identity of what it holds.

For each case the function runs `CALLS` times as written and `CALLS` times compiled; what
every call returns, described by `describe`, is equal. explain() of one more call counts the
expected graphs and breaks. Prints one line per case; `FAIL` marks a failed one."""
from collections import OrderedDict
from dataclasses import dataclass, fields
from typing import Optional, Tuple

import symtrace as st
import symtrace.nn as nn
from case_report import count_problems, report

failures = []
CALLS = 4


class ModelOutput(OrderedDict):
    """Entries for the fields that are not None, each also an attribute; indexed by name or
    by position among the entries."""

    def __post_init__(self):
        names = [f.name for f in fields(self)]
        if not names:
            raise ValueError(f"{type(self).__name__} has no fields")
        for name in names:
            value = getattr(self, name)
            if value is not None:
                self[name] = value

    def __getitem__(self, k):
        if isinstance(k, str):
            return dict(self.items())[k]
        return self.to_tuple()[k]

    def __setattr__(self, name, value):
        if name in self.keys() and value is not None:
            super().__setitem__(name, value)
        super().__setattr__(name, value)

    def __setitem__(self, key, value):
        super().__setitem__(key, value)
        super().__setattr__(key, value)

    def __delitem__(self, *args, **kwargs):
        raise RuntimeError(f"You cannot use ``__delitem__`` on a {type(self).__name__} instance.")

    def pop(self, *args, **kwargs):
        raise RuntimeError(f"You cannot use ``pop`` on a {type(self).__name__} instance.")

    def to_tuple(self):
        return tuple(self[k] for k in self.keys())


@dataclass
class EncoderOutput(ModelOutput):
    last_hidden_state: Optional[st.Tensor] = None
    hidden_states: Optional[Tuple[st.Tensor, ...]] = None
    attentions: Optional[Tuple[st.Tensor, ...]] = None


@dataclass
class ClassifierOutput(ModelOutput):
    loss: Optional[st.Tensor] = None
    logits: Optional[st.Tensor] = None
    hidden_states: Optional[Tuple[st.Tensor, ...]] = None


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(2)])

    def forward(self, x, output_hidden_states=False, return_dict=True):
        states = (x,) if output_hidden_states else None
        h = x
        for layer in self.layers:
            h = layer(h).tanh()
            if output_hidden_states:
                states = states + (h,)
        if not return_dict:
            return tuple(v for v in (h, states) if v is not None)
        return EncoderOutput(last_hidden_state=h, hidden_states=states)


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = Encoder()
        self.head = nn.Linear(4, 3)

    def forward(self, x, labels=None, output_hidden_states=False):
        out = self.encoder(x, output_hidden_states=output_hidden_states)
        pooled = out.last_hidden_state[:, 0] + out[0][:, -1]
        logits = self.head(pooled)
        loss = None
        if labels is not None:
            loss = ((logits - labels) ** 2).mean()
        extra = len(out) + ("hidden_states" in out) + len(out.to_tuple())
        return ClassifierOutput(loss=loss, logits=logits * extra,
                                hidden_states=out["hidden_states"] if output_hidden_states else None)


class AttrDict(dict):
    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name)

    def __setattr__(self, name, value):
        self[name] = value


class Bag(dict):
    pass


st.manual_seed(0)
model = Classifier()
encoder = Encoder()


def classify(x, labels):
    return model(x, labels=labels, output_hidden_states=True)


def classify_without_labels(x):
    out = model(x)
    return out.logits, out.to_tuple(), list(out.keys()), out["logits"] is out.logits


def encode(x):
    return encoder(x)


def attr_dict(x):
    d = AttrDict()
    d.scores = x.softmax(-1)
    d["top"] = x.max(-1)
    d.scale = 2.0
    return d, d.scores * d.scale, sorted(d), len(d)


def plain_subclass(x):
    b = Bag(a=x + 1, b=2)
    b["c"] = x * 3
    b.update({"a": x - 1})
    del b["b"]
    b.note = "kept"
    return b, list(b.items())[0][1] + b.get("c"), b.setdefault("d", 4)


def ordered_specifics(x):
    # What only an OrderedDict does (an order changed apart from insertion) runs as written.
    h = (x * 2).tanh() + 1
    out = EncoderOutput(last_hidden_state=h, hidden_states=(x, h))
    OrderedDict.move_to_end(out, "last_hidden_state")
    return out, list(out.keys()), out.last_hidden_state * 3


def describe(v, seen=None):
    """What a program can observe of a result: types, entries in order, attributes, values,
    and which parts are one object."""
    seen = {} if seen is None else seen
    if id(v) in seen:
        return ("same as", seen[id(v)])
    if isinstance(v, (dict, tuple, list, st.Tensor)):
        seen[id(v)] = len(seen)
    if isinstance(v, st.Tensor):
        return ("tensor", [round(a, 9) for a in v.flatten().tolist()])
    if isinstance(v, dict):
        attrs = sorted(vars(v).items()) if hasattr(v, "__dict__") else []
        return (type(v).__name__, [(k, describe(x, seen)) for k, x in v.items()],
                [(k, describe(x, seen)) for k, x in attrs])
    if isinstance(v, (tuple, list)):
        return (type(v).__name__, [describe(x, seen) for x in v])
    return v


def check(name, fn, make_args, graphs, breaks):
    def run(call):
        st.manual_seed(1)
        return [describe(call(*make_args(i))) for i in range(CALLS)]

    eager = run(fn)
    traced = run(st.compile(fn))
    problems = []
    if traced != eager:
        problems.append(f"traced {traced} != eager {eager}")
    problems += count_problems(st.explain(fn, *make_args(CALLS)), graphs, breaks)
    report(name, problems, failures)


check("a ModelOutput made by an encoder and read by its model", classify,
      lambda i: (st.randn(2, 3, 4), st.randn(2, 3)), 1, 0)
check("a ModelOutput read by key, by position, as a tuple", classify_without_labels,
      lambda i: (st.randn(2, 3, 4),), 1, 0)
check("a ModelOutput returned to the caller", encode, lambda i: (st.randn(2, 4),), 1, 0)
check("an AttrDict made in the call", attr_dict, lambda i: (st.randn(2, 3),), 1, 0)
check("a plain subclass of dict filled by dict's __init__", plain_subclass,
      lambda i: (st.randn(2),), 1, 0)
# The graph before the break is kept; the rest reads a caller's OrderedDict subclass by its
# order, which is the OrderedDict's own: it runs as written.
check("an OrderedDict's own order changes run as written", ordered_specifics,
      lambda i: (st.randn(2),), 1, 2)

out = st.compile(encode)(st.randn(2, 4))
out["extra"] = 1
print("ok the caller changes a returned ModelOutput" if list(out.keys()) == ["last_hidden_state", "extra"]
      and out.extra == 1 and isinstance(out, OrderedDict) else "FAIL the caller changes a returned ModelOutput")
if list(out.keys()) != ["last_hidden_state", "extra"]:
    failures.append("caller")
print("ALL OK", len(failures))
