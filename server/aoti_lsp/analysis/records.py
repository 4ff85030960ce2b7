"""What @dataclass adds to a record class, without compiling anything: creating a dataclass
costs ~0.5 ms at import (its methods are compiled from source), and a check of a file with AOTI
code created ~35. The class writes its own `__init__`; `record` adds `__eq__`, `__hash__`,
`__repr__` and `__match_args__` as @dataclass(eq=True, frozen=...) would; `replace` copies one
with changes, as dataclasses.replace. Importing the dataclasses module alone costs ~7 ms (it
imports inspect, ast, dis, tokenize): no module a check imports uses it."""

from __future__ import annotations

from operator import attrgetter


class FrozenInstanceError(AttributeError):
    """Assigning to a frozen record (dataclasses' own, without importing that module)."""


def replace(obj, **changes):
    """A copy of a record (or a dataclass) with `changes`: its `__init__` gets every field, in
    `__match_args__` order, from `changes` or from `obj`."""
    names = obj.__class__.__match_args__
    unknown = changes.keys() - set(names)
    if unknown:
        raise TypeError(f"{obj.__class__.__qualname__} has no field {sorted(unknown)[0]!r}")
    return obj.__class__(**{n: changes[n] if n in changes else getattr(obj, n) for n in names})


def record(*fields: str, frozen: bool = False, compare: tuple[str, ...] | None = None,
           shown: tuple[str, ...] | None = None):
    """`fields`: the __init__ parameters in order (match); `compare`: those eq and hash read,
    `shown`: those repr shows (default: all). Frozen: hashed, assignment raises; else
    unhashable, as a dataclass."""
    compared = fields if compare is None else compare
    shown = fields if shown is None else shown
    if len(compared) == 1:
        one = attrgetter(compared[0])

        def key(obj):
            return (one(obj),)
    elif compared:
        key = attrgetter(*compared)
    else:
        def key(obj):
            return ()

    def __eq__(self, other):
        if other.__class__ is self.__class__:
            return key(self) == key(other)
        return NotImplemented

    def __repr__(self):
        return f"{self.__class__.__qualname__}({', '.join(f'{n}={getattr(self, n)!r}' for n in shown)})"

    def wrap(cls):
        cls.__eq__, cls.__repr__, cls.__match_args__ = __eq__, __repr__, fields
        if frozen:
            cls.__hash__ = lambda self: hash(key(self))
            cls.__setattr__, cls.__delattr__ = _frozen_set, _frozen_del
        else:
            cls.__hash__ = None
        return cls

    return wrap


def _frozen_set(self, name, value):
    raise FrozenInstanceError(f"cannot assign to field {name!r}")


def _frozen_del(self, name):
    raise FrozenInstanceError(f"cannot delete field {name!r}")


set_field = object.__setattr__  # a frozen record's __init__
