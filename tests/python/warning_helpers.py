"""Helpers of another module for tests/python/deferred_warnings.py: their warnings name
frames whose globals (the registry, the module's name) are this module's."""
import warnings


def scaled(x, k):
    if k > 1:
        warnings.warn("k above one", RuntimeWarning)
    return x * k


def checked(x):
    warnings.warn("checked is deprecated", DeprecationWarning, stacklevel=2)
    return x + 1.0


def twice_checked(x):
    return checked(x) * 2.0
