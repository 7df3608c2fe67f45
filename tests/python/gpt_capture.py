"""The GPT of demos/gpt.py, captured: the whole forward pass with the loss is one graph with
no break, traced equals eager bit for bit, and a second call translates nothing. Run with and
without `--plugin symtrace`; under the plugin, a plain call of the model is traced too."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "demos"))
import gpt  # noqa: E402
import symtrace as st  # noqa: E402

st.manual_seed(1337)
st.set_default_dtype(st.float32)
model = gpt.GPT(gpt.Config()).eval()
idx = (st.rand(2, 16) * 64).long()
targets = (st.rand(2, 16) * 64).long()

eager_logits, eager_loss = st.disable(model)(idx, targets)
explained = st.explain(model, idx, targets)
print("graphs:", explained.graph_count, "breaks:", explained.graph_break_count,
      "ops:", explained.op_count)

st.reset()
compiled = st.compile(model, fullgraph=True)
logits, loss = compiled(idx, targets)
first = st.stats()
logits2, loss2 = compiled(idx, targets)
second = st.stats()
print("fullgraph equal:", logits.tolist() == eager_logits.tolist() and loss.item() == eager_loss.item(),
      logits2.tolist() == eager_logits.tolist())
print("translations:", first["translations"], second["translations"],
      "hits:", second["cache_hits"] - first["cache_hits"])
# A plain call: traced when the plugin is installed, eager otherwise.
st.reset()
plain_logits, plain_loss = model(idx, targets)
print("plain call equal:", plain_logits.tolist() == eager_logits.tolist(),
      "translations:", st.stats()["translations"])
