from runner import case, finish
import symtrace as st

x = st.randn(2, 3)
w = st.randn(3, 4)

def reductions(a):
    return a.sum(), a.sum(dim=1), a.mean(dim=0, keepdim=True), a.max(dim=1), a.argmax(dim=1)

def elementwise(a):
    return a.exp(), a.abs().log(), a.abs().sqrt(), a.tanh(), a.sigmoid(), a.relu(), a.clamp(min=-0.5, max=0.5)

def shapes(a):
    return a.reshape(3, 2), a.transpose(0, 1), a.unsqueeze(0).shape, a.T, a.permute(1, 0)

def functions(a, m):
    return st.softmax(a @ m, dim=-1), st.log_softmax(a, dim=1), st.maximum(a, 0.0), st.cat([a, a], dim=0)

def dtypes(a):
    return a.to(st.float32), a.long(), a.double(), a.dtype.name, a.float().dtype.is_floating_point

def creation(a):
    return a + st.zeros(3), st.ones_like(a) * a, st.full((2, 3), 2.0) + a

case(reductions, x)
case(elementwise, x)
case(shapes, x)
case(functions, x, w)
case(dtypes, x)
case(creation, x)
finish()
