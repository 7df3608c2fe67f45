"""What programs written for torch.compile spell around it: torch.compile's keywords
(mode, dynamic, backend by name, options, disable), Module.compile, torch.compiler's and
torch._dynamo's reset, disable, set_stance, mark_dynamic, explain and config; a script's
setup lines (torch.cuda, torch.backends, float32 matmul precision, determinism, threads). Prints one line
per check; `FAIL` marks a failed one."""
import symtrace as torch
import symtrace.nn as nn
import symtrace._dynamo
from symtrace._dynamo import config

failures = []


def check(name, ok, detail=""):
    print(("ok " if ok else "FAIL ") + name + ("" if ok else ": " + str(detail)))
    if not ok:
        failures.append(name)


def translations():
    return torch.stats()["translations"]


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.GELU(), nn.Linear(8, 2))
x = torch.randn(3, 4)
eager = model(x).tolist()

torch._dynamo.reset()
compiled = torch.compile(model, mode="max-autotune", dynamic=True, fullgraph=False,
                         backend="inductor")
check("torch.compile with mode, dynamic, backend", compiled(x).tolist() == eager
      and translations() >= 1, torch.stats())
check("options instead of mode", torch.compile(model, options={"trace.enabled": False})(x).tolist() == eager)

def double(t):
    return t * 2

check("disable=True gives the function itself", torch.compile(double, disable=True) is double
      and torch.compile(disable=True)(double) is double)
try:
    torch.compile(model, backend=lambda gm, inputs: gm)
    check("a backend function is refused", False, "no error")
except NotImplementedError as e:
    check("a backend function is refused", "backend" in str(e), e)
try:
    torch.compile(model, mode="default", options={})
    check("mode and options together are refused", False, "no error")
except RuntimeError:
    check("mode and options together are refused", True)

torch.compiler.reset()
check("compiler.reset clears the counts", translations() == 0, torch.stats())
seen = []
model[0].register_forward_hook(lambda mod, inp, out: seen.append(tuple(out.shape)))
model.compile()
out = model(x).tolist()
check("Module.compile: calls run traced, hooks around them", out == eager and translations() >= 1
      and seen == [(3, 8)], (torch.stats(), seen))


@torch.compiler.disable
def untraced(t):
    return t + 1


torch._dynamo.reset()
check("compiler.disable as a decorator", torch.compile(lambda t: untraced(t) * 2)(x).tolist()
      == ((x + 1) * 2).tolist())

frames_as_written = []


def scaled(t):
    return t * 3.0


@torch._dynamo.disable(recursive=False)
def checker(t):
    frames_as_written.append(len(frames_as_written))  # as written: no replay to guard
    return scaled(t) + 1.0


def calls_checker(t):
    return checker(t * 2.0) - 1.0


torch._dynamo.reset()
e = torch._dynamo.explain(calls_checker)(x)
got = [torch.compile(calls_checker)(x).tolist() for _ in range(2)]
torch._dynamo.reset()  # drops translations; the disabled frame stays as written
got.append(torch.compile(calls_checker)(x).tolist())
check("_dynamo.disable(recursive=False): the frame as written, its callee traced",
      got == [((x * 2.0) * 3.0 + 1.0 - 1.0).tolist()] * 3 and frames_as_written == [0, 1, 2, 3]
      and any("recursive=False" in b["reason"] for b in e.break_reasons)
      and torch.stats()["translations"] >= 2, (got, frames_as_written, e.break_reasons))

def late(t):
    return t * 2.0 + 1.0


torch.compile(late)(x)  # translated first, disabled after: reset() must not trace it again
torch._dynamo.disable(late, recursive=False)
torch._dynamo.reset()
torch.compile(late)(x)
check("_dynamo.disable(recursive=False) after a translation, then reset",
      translations() == 0, torch.stats())

y = torch.randn(5, 4)
torch._dynamo.mark_dynamic(y, 0)
torch._dynamo.mark_static(y, 1)
f = torch.compile(lambda t: t.sum(0))
check("_dynamo.mark_dynamic", f(y).tolist() == y.sum(0).tolist())
explained = torch._dynamo.explain(lambda t: t.relu() + 1)(x)
check("_dynamo.explain", explained.graph_count == 1, explained)
config.cache_size_limit = 64
torch._dynamo.config.suppress_errors = True
check("_dynamo.config takes the settings programs write", symtrace._dynamo.config.cache_size_limit == 64
      and config.suppress_errors is True)
with torch.compiler.set_stance("force_eager"):
    check("compiler.set_stance", torch.compile(double)(x).tolist() == (x * 2).tolist())

# A script's setup lines, on a machine without CUDA.
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
torch.backends.cudnn.benchmark = True
torch.backends.cuda.matmul.allow_tf32 = True
torch.set_float32_matmul_precision("high")
torch.use_deterministic_algorithms(True)
torch.cuda.manual_seed_all(0)
check("a script's setup lines", str(device) == "cpu" and torch.cuda.device_count() == 0
      and not torch.backends.mps.is_available() and torch.get_float32_matmul_precision() == "high"
      and torch.are_deterministic_algorithms_enabled() and torch.get_num_threads() >= 1)
on_device = torch.compile(lambda t: t.to("cuda" if torch.cuda.is_available() else "cpu") * 2)
check("the device chosen inside a compiled function", on_device(x).tolist() == (x * 2).tolist())

# An evaluation loop over a DataLoader, the model compiled.
from symtrace.utils.data import DataLoader, TensorDataset

torch.manual_seed(3)
data = TensorDataset(torch.randn(10, 4), torch.arange(10) % 2)
criterion = nn.CrossEntropyLoss()
fresh = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
step = torch.compile(lambda xb, yb: criterion(fresh(xb), yb))
traced_losses, eager_losses = [], []
for xb, yb in DataLoader(data, batch_size=4, shuffle=False):
    traced_losses.append(step(xb, yb).item())
    eager_losses.append(criterion(fresh(xb), yb).item())
check("an evaluation loop over a DataLoader", traced_losses == eager_losses
      and len(traced_losses) == 3, (traced_losses, eager_losses))

# A test comparing the compiled model with eager, as test suites write it.
torch.testing.assert_close(compiled(x), model(x))
torch.testing.assert_close([step(xb, yb)], [criterion(fresh(xb), yb)], rtol=0.0, atol=0.0)
try:
    torch.testing.assert_close(compiled(x), model(x) + 1e-3)
    check("testing.assert_close", False, "no error for values 1e-3 apart")
except AssertionError as e:
    check("testing.assert_close", "not close" in str(e), e)

# autocast to CUDA without CUDA: torch warns and runs without it; on the CPU, refused.
import warnings

with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    with torch.autocast(device_type="cuda", dtype=torch.float32):
        under_autocast = compiled(x).tolist()
    with torch.cuda.amp.autocast():
        pass
try:
    torch.autocast("cpu")
    refused = False
except NotImplementedError:
    refused = True
check("autocast without CUDA", under_autocast == eager and len(caught) == 2 and refused
      and "not available" in str(caught[0].message), [str(c.message) for c in caught])

# Library code's deeper import paths.
from symtrace.nn.parameter import Parameter
from symtrace.nn.modules.module import Module
from symtrace.nn.modules.linear import Linear

check("torch.nn's deeper import paths", Parameter is nn.Parameter and Module is nn.Module
      and Linear is nn.Linear and torch.nn.modules.conv.Conv2d is nn.Conv2d)
relu_module = torch.nn.modules.activation.ReLU()
explained = torch._dynamo.explain(
    lambda t: torch.nn.modules.activation.ReLU()(t) + relu_module(t) * 2)(x)
check("a class read through a deeper path inside a traced call",
      explained.graph_count == 1 and explained.graph_break_count == 0, explained)

print("ALL OK" if not failures else "FAILED", len(failures))
