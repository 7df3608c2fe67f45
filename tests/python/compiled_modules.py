"""A module compiled as `torch.compile(model)` is: an OptimizedModule around the model (its
`_orig_mod`), as torch's, which programs treat as the model (attributes and methods read and
written through it, train/eval, parameters) and whose state_dict keys start with `_orig_mod.`
(the prefix training scripts strip before loading into a plain model). A compiled function or
module called from a traced call is inlined there: one graph, no break. Prints one line per
check; `FAIL` marks a failed one."""
import symtrace as torch
import symtrace.nn as nn
import symtrace.nn.functional as F

failures = []


def check(name, ok, detail=""):
    print(("ok " if ok else "FAIL ") + name + ("" if ok else ": " + str(detail)))
    if not ok:
        failures.append(name)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.fc2 = nn.Linear(8, 3)
        self.temperature = 1.0

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x))) / self.temperature

    def predict(self, x):
        return self(x).argmax(-1)

    def __repr__(self):
        reprs.append(1)
        return super().__repr__()


reprs = []


torch.manual_seed(0)
model = Net()
x = torch.randn(5, 4)
eager = model(x).tolist()
compiled = torch.compile(model)

check("the model is its _orig_mod", compiled._orig_mod is model
      and type(compiled).__name__ == "OptimizedModule" and isinstance(compiled, nn.Module)
      and not isinstance(compiled, Net), type(compiled))
check("calls run traced", compiled(x).tolist() == eager and torch.stats()["translations"] >= 1,
      torch.stats())
before = torch.stats()["translations"]
for _ in range(3):
    compiled(x)
check("later calls translate nothing", torch.stats()["translations"] == before, torch.stats())
check("attributes and methods read through it", compiled.fc1 is model.fc1
      and compiled.temperature == 1.0 and compiled.predict(x).tolist() == model.predict(x).tolist())
compiled.temperature = 2.0
check("attributes written through it", model.temperature == 2.0
      and "temperature" not in vars(compiled)
      and compiled(x).tolist() == model(x).tolist(), vars(compiled).keys())
compiled.temperature = 1.0
compiled.eval()
check("eval() reaches the model", not model.training and not compiled.training)
compiled.train()
model.eval()
check("its training is the model's", not compiled.training)
model.train()
check("len() of a compiled Sequential", len(torch.compile(nn.Sequential(nn.ReLU(), nn.Tanh()))) == 2)
check("parameters are the model's", [id(p) for p in compiled.parameters()]
      == [id(p) for p in model.parameters()])
keys = list(compiled.state_dict())
check("state_dict keys start with _orig_mod.", keys and all(k.startswith("_orig_mod.") for k in keys)
      and [k[len("_orig_mod."):] for k in keys] == list(model.state_dict()), keys)
fresh = Net()
prefix = "_orig_mod."
fresh.load_state_dict({k[len(prefix):]: v for k, v in compiled.state_dict().items()})
check("the stripped state_dict loads into a plain model", fresh(x).tolist() == eager)
check("repr names the wrapper and the model", repr(compiled).startswith("OptimizedModule(\n  (_orig_mod): Net("),
      repr(compiled))
seen = []
handle = compiled.register_forward_hook(lambda mod, inp, out: seen.append(mod is compiled))
compiled(x)
handle.remove()
check("a hook on the wrapper runs", seen == [True], seen)
try:
    compiled.missing
    check("a missing attribute is an AttributeError", False, "no error")
except AttributeError as e:
    check("a missing attribute is an AttributeError", "missing" in str(e), e)

# Named as functools.wraps names: the interpreter reads `__qualname__` at each call with
# `**kwargs`; without it, it made the whole model's repr, at every call.
del reprs[:]
no_keywords = {}
compiled.forward(x, **no_keywords)
traced_double = torch.compile(lambda t: t * 2)
check("a compiled function is named as the function it wraps", not reprs
      and compiled.forward.__qualname__ == "Net.__call__"
      and traced_double.__name__ == "<lambda>" and traced_double.__module__ == __name__,
      (reprs, compiled.forward.__qualname__, traced_double.__name__))

# Called from a traced function: inlined into its graph.
def step(inputs):
    return F.softmax(compiled(inputs), -1).sum()


explained = torch._dynamo.explain(step)(x)
check("a compiled module called from a traced call is inlined",
      explained.graph_count == 1 and explained.graph_break_count == 0, explained)
double = torch.compile(lambda t: t * 2)
explained = torch._dynamo.explain(lambda t: double(t).relu() + 1)(x)
check("a compiled function called from a traced call is inlined",
      explained.graph_count == 1 and explained.graph_break_count == 0, explained)
check("and gives the same result", torch.compile(step)(x).item() == step(x).item())

print("ALL OK" if not failures else "FAILED", len(failures))
