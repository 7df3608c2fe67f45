"""A residual feed-forward block written as users write model code: a `Module` whose
submodules (`LayerNorm`, `Linear`, `GELU`, `Linear`) are its attributes, called as
`block(x)`. Under `--plugin symtrace` a stack of them is one graph."""
import symtrace as st
from symtrace import nn


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.norm = nn.LayerNorm(d)
        self.up = nn.Linear(d, 2 * d)
        self.act = nn.GELU()
        self.down = nn.Linear(2 * d, d)

    def forward(self, x):
        return x + self.down(self.act(self.up(self.norm(x))))


if __name__ == "__main__":
    st.manual_seed(0)
    model = nn.Sequential(Block(16), Block(16))
    x = st.randn(2, 16)
    out = model(x)
    print("output shape:", out.shape)
    print("traced equals eager:", out.tolist() == st.disable(model)(x).tolist())
    e = st.explain(model, x)
    print("captured:", e.graph_count, "graph,", e.op_count, "ops,", e.graph_break_count, "graph breaks")
