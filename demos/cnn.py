"""A small residual CNN written the way PyTorch users write one (`Conv2d`, `BatchNorm2d` in
training mode with its running statistics, pooling, a classifier head, a loss read with
`logp[st.arange(B), labels]`), classifying random 16x16 images. It runs each batch size
eagerly and traced and prints what the tracer did: equal results, the time per forward pass
both ways, and what st.explain captured.

    target/release/rustpython --plugin symtrace demos/cnn.py
"""
import time

import symtrace as st
import symtrace.nn as nn
from symtrace.nn import functional as F


class Block(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        return F.relu(x + self.bn2(self.conv2(out)))


class SmallResNet(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU())
        self.blocks = nn.Sequential(Block(16), nn.MaxPool2d(2), Block(16))
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.head = nn.Linear(16, classes)

    def forward(self, images, labels):
        x = self.blocks(self.stem(images))
        logits = self.head(self.pool(x).flatten(1))
        logp = logits.log_softmax(-1)
        loss = -logp[st.arange(images.shape[0]), labels].mean()
        return logits.argmax(-1), loss


def timed(fn, *args, repeat=5):
    fn(*args)
    start = time.perf_counter()
    for _ in range(repeat):
        fn(*args)
    return (time.perf_counter() - start) / repeat


if __name__ == "__main__":
    st.manual_seed(0)
    model = SmallResNet()
    eager_model = SmallResNet()
    eager_model.load_state_dict(model.state_dict())
    compiled = st.compile(model)
    eager = st.disable(eager_model)
    # Made before the count starts: under `--plugin symtrace` the functions that draw them
    # are translated too.
    batches = [(b, st.randn(b, 3, 16, 16), st.randint(0, 10, (b,))) for b in (4, 8, 6)]
    st.reset()
    for batch, images, labels in batches:
        (p1, l1), (p2, l2) = compiled(images, labels), eager(images, labels)
        print(f"batch {batch}: loss {float(l1):.6f}, traced equals eager:",
              p1.tolist() == p2.tolist() and float(l1) == float(l2))
    print("running means equal:", model.stem[1].running_mean.tolist()
          == eager_model.stem[1].running_mean.tolist())
    print("translations for three batch sizes:", st.stats()["translations"])
    images, labels = st.randn(8, 3, 16, 16), st.randint(0, 10, (8,))
    model.eval()
    eager_model.eval()
    print(f"forward, eval, batch 8: eager {timed(eager, images, labels) * 1e3:.2f} ms, "
          f"traced {timed(compiled, images, labels) * 1e3:.2f} ms")
    e = st.explain(model, images, labels)
    print("captured:", e.graph_count, "graph,", e.op_count, "ops,", e.graph_break_count, "graph breaks")
