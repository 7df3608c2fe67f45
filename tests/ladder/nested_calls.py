from runner import case, finish
import symtrace as st

x = st.randn(2, 4)
w1, w2 = st.randn(4, 4), st.randn(4, 2)

def linear(a, w):
    return a @ w

def block(a, w):
    return st.relu(linear(a, w))

def model(a, w1, w2):
    return st.softmax(linear(block(a, w1), w2), dim=-1)

def recursive(a, n):
    if n == 0:
        return a
    return recursive(a * 2, n - 1)

class Layer:
    def __init__(self, w):
        self.w = w

    def forward(self, a):
        return a @ self.w

def method_call(layer, a):
    return layer.forward(a).sum(dim=1)

case(model, x, w1, w2)
case(recursive, x, 3)
case(method_call, st.disable(Layer)(w1), x)
finish()
