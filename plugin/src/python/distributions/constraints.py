"""`symtrace.distributions.constraints`: the sets a distribution's parameters and samples
belong to, each with `check(value)`, a bool tensor over the batch (torch's constraints, their
reprs included, since a failed validation names them). Built into the binary and run first of
the distribution sources; `_st` is the symtrace module."""


class Constraint:
    """A set of values; `event_dim` is how many rightmost dimensions one point spans."""

    is_discrete = False
    event_dim = 0

    def check(self, value):
        raise NotImplementedError

    def __repr__(self):
        return type(self).__name__.lstrip("_") + "()"


class _Dependent(Constraint):
    """A placeholder for a support that depends on other parameters: never checked."""

    def __init__(self, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        self._is_discrete = is_discrete
        self._event_dim = event_dim

    @property
    def is_discrete(self):
        if self._is_discrete is NotImplemented:
            raise NotImplementedError(".is_discrete cannot be determined statically")
        return self._is_discrete

    @property
    def event_dim(self):
        if self._event_dim is NotImplemented:
            raise NotImplementedError(".event_dim cannot be determined statically")
        return self._event_dim

    def __call__(self, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        if is_discrete is NotImplemented:
            is_discrete = self._is_discrete
        if event_dim is NotImplemented:
            event_dim = self._event_dim
        return _Dependent(is_discrete=is_discrete, event_dim=event_dim)

    def check(self, x):
        raise ValueError("Cannot determine validity of dependent constraint")


def is_dependent(constraint):
    return isinstance(constraint, _Dependent)


class _DependentProperty(property, _Dependent):
    """A property that is also a dependent constraint, as a distribution's `support` that
    its parameters decide: `@constraints.dependent_property(is_discrete=..., event_dim=...)`."""

    def __init__(self, fn=None, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        property.__init__(self, fn)
        self._is_discrete = is_discrete
        self._event_dim = event_dim

    def __call__(self, fn):
        return _DependentProperty(fn, is_discrete=self._is_discrete, event_dim=self._event_dim)


class _IndependentConstraint(Constraint):
    """`base_constraint` with its rightmost `reinterpreted_batch_ndims` batch dimensions
    made part of the event: a point holds where all of them hold."""

    def __init__(self, base_constraint, reinterpreted_batch_ndims):
        if not isinstance(base_constraint, Constraint):
            raise TypeError("base_constraint must be a Constraint")
        if not isinstance(reinterpreted_batch_ndims, int) or reinterpreted_batch_ndims < 0:
            raise ValueError("reinterpreted_batch_ndims must be a non-negative int")
        self.base_constraint = base_constraint
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    @property
    def is_discrete(self):
        return self.base_constraint.is_discrete

    @property
    def event_dim(self):
        return self.base_constraint.event_dim + self.reinterpreted_batch_ndims

    def check(self, value):
        result = self.base_constraint.check(value)
        n = self.reinterpreted_batch_ndims
        if result.dim() < n:
            expected = self.base_constraint.event_dim + n
            raise ValueError(f"Expected value.dim() >= {expected} but got {value.dim()}")
        if n == 0:
            return result
        return result.reshape(tuple(result.shape[: result.dim() - n]) + (-1,)).all(-1)

    def __repr__(self):
        return f"IndependentConstraint({self.base_constraint!r}, {self.reinterpreted_batch_ndims})"


class _Boolean(Constraint):
    is_discrete = True

    def check(self, value):
        return (value == 0) | (value == 1)


class _OneHot(Constraint):
    is_discrete = True
    event_dim = 1

    def check(self, value):
        is_boolean = (value == 0) | (value == 1)
        return is_boolean.all(-1) & value.sum(-1).eq(1)


def _bounds_repr(self, *names):
    return type(self).__name__.lstrip("_") + "(" + ", ".join(f"{n}={getattr(self, n)}" for n in names) + ")"


class _IntegerInterval(Constraint):
    is_discrete = True

    def __init__(self, lower_bound, upper_bound):
        self.lower_bound = lower_bound
        self.upper_bound = upper_bound

    def check(self, value):
        return (value % 1 == 0) & (self.lower_bound <= value) & (value <= self.upper_bound)

    def __repr__(self):
        return _bounds_repr(self, "lower_bound", "upper_bound")


class _IntegerGreaterThan(Constraint):
    is_discrete = True

    def __init__(self, lower_bound):
        self.lower_bound = lower_bound

    def check(self, value):
        return (value % 1 == 0) & (value >= self.lower_bound)

    def __repr__(self):
        return _bounds_repr(self, "lower_bound")


class _Real(Constraint):
    def check(self, value):
        # NaN is the one value not equal to itself.
        return value == value


class _GreaterThan(Constraint):
    def __init__(self, lower_bound):
        self.lower_bound = lower_bound

    def check(self, value):
        return self.lower_bound < value

    def __repr__(self):
        return _bounds_repr(self, "lower_bound")


class _GreaterThanEq(_GreaterThan):
    def check(self, value):
        return self.lower_bound <= value


class _LessThan(Constraint):
    def __init__(self, upper_bound):
        self.upper_bound = upper_bound

    def check(self, value):
        return value < self.upper_bound

    def __repr__(self):
        return _bounds_repr(self, "upper_bound")


class _Interval(Constraint):
    def __init__(self, lower_bound, upper_bound):
        self.lower_bound = lower_bound
        self.upper_bound = upper_bound

    def check(self, value):
        return (self.lower_bound <= value) & (value <= self.upper_bound)

    def __repr__(self):
        return _bounds_repr(self, "lower_bound", "upper_bound")


class _HalfOpenInterval(_Interval):
    def check(self, value):
        return (self.lower_bound <= value) & (value < self.upper_bound)


class _Simplex(Constraint):
    event_dim = 1

    def check(self, value):
        return (value >= 0).all(-1) & ((value.sum(-1) - 1).abs() < 1e-6)


class _Multinomial(Constraint):
    """Counts of at most `upper_bound` trials in all."""

    is_discrete = True
    event_dim = 1

    def __init__(self, upper_bound):
        self.upper_bound = upper_bound

    def check(self, x):
        return (x >= 0).all(-1) & (x.sum(-1) <= self.upper_bound)


class _LowerTriangular(Constraint):
    event_dim = 2

    def check(self, value):
        return _st.eq(value.tril(), value).flatten(-2).all(-1)


class _LowerCholesky(Constraint):
    event_dim = 2

    def check(self, value):
        lower = _st.eq(value.tril(), value).flatten(-2).all(-1)
        return lower & (value.diagonal(dim1=-2, dim2=-1) > 0).all(-1)


class _Square(Constraint):
    event_dim = 2

    def check(self, value):
        square = value.shape[-2] == value.shape[-1]
        return _st.full(tuple(value.shape[:-2]), square, dtype=_st.bool)


class _Symmetric(_Square):
    def check(self, value):
        # Squareness is a fact of the shape, decided here without looking at the values.
        if value.shape[-2] != value.shape[-1]:
            return _Square.check(self, value)
        return _st.isclose(value, value.transpose(-2, -1), atol=1e-6).all(-1).all(-1)


class _PositiveSemidefinite(_Symmetric):
    def check(self, value):
        if value.shape[-2] != value.shape[-1]:
            return _Square.check(self, value)
        # Where the matrix is not symmetric the answer is False whatever its eigenvalues
        # (of its lower triangle) are: no branch on the values.
        return _Symmetric.check(self, value) & _st.linalg.eigvalsh(value).ge(0).all(-1)


class _PositiveDefinite(_Symmetric):
    def check(self, value):
        if value.shape[-2] != value.shape[-1]:
            return _Square.check(self, value)
        return _Symmetric.check(self, value) & _st.linalg.eigvalsh(value).gt(0).all(-1)


dependent = _Dependent()
dependent_property = _DependentProperty
independent = _IndependentConstraint
boolean = _Boolean()
one_hot = _OneHot()
nonnegative_integer = _IntegerGreaterThan(0)
positive_integer = _IntegerGreaterThan(1)
integer_interval = _IntegerInterval
real = _Real()
real_vector = independent(real, 1)
positive = _GreaterThan(0.0)
nonnegative = _GreaterThanEq(0.0)
greater_than = _GreaterThan
greater_than_eq = _GreaterThanEq
less_than = _LessThan
unit_interval = _Interval(0.0, 1.0)
interval = _Interval
half_open_interval = _HalfOpenInterval
simplex = _Simplex()
multinomial = _Multinomial
lower_triangular = _LowerTriangular()
lower_cholesky = _LowerCholesky()
square = _Square()
symmetric = _Symmetric()
positive_semidefinite = _PositiveSemidefinite()
positive_definite = _PositiveDefinite()

CONSTRAINTS = {
    name: value
    for name, value in dict(globals()).items()
    if not name.startswith("_") and name not in ("CONSTRAINTS",)
    and (isinstance(value, Constraint) or name in (
        "Constraint", "dependent_property", "independent", "integer_interval", "greater_than",
        "greater_than_eq", "less_than", "interval", "half_open_interval", "is_dependent",
        "multinomial"))
}
