"""A cheaper `__init__` for the frozen records made every line.

A frozen dataclass's own `__init__` stores each field through `object.__setattr__` (its `__setattr__` refuses),
a general call that builds argument tuples for every field: for the records a line makes, about a tenth of the
line's work. `quick_init` gives such a class an `__init__` with the same parameters and defaults that stores each
field through the field's slot directly. The class stays the same frozen, slotted dataclass: fields, equality,
hashing, `replace` and the refusal to change a field are the dataclass's own.

It generates that `__init__` when the class is made, as `dataclasses` generates its own: that is why it lives beside
`parse/` and `compute/`, whose modules do no I/O and run no generated code, rather than in them.
"""

from __future__ import annotations

import dataclasses
from typing import TypeVar

T = TypeVar("T")


def quick_init(cls: type[T]) -> type[T]:
    """Give `cls`, a `@dataclass(frozen=True, slots=True)`, an `__init__` storing each field through its slot.

    Only for plain fields: a class with a `__post_init__`, a `default_factory`, a keyword-only field, a field left out
    of `__init__` or an `InitVar` is refused (`TypeError`): the dataclass's own `__init__` does more for those."""
    params = getattr(cls, "__dataclass_params__", None)
    if params is None or not params.frozen or "__slots__" not in vars(cls):
        raise TypeError(f"{cls.__name__} is not a frozen, slotted dataclass")
    fields = dataclasses.fields(cls)  # type: ignore[arg-type]  # checked above: a dataclass
    own = vars(cls)["__init__"].__code__
    # The dataclass's own parameters are exactly the fields, in order: no InitVar, no keyword-only field, none left
    # out of `__init__`.
    same_parameters = own.co_varnames[1 : own.co_argcount] == tuple(field.name for field in fields)
    if hasattr(cls, "__post_init__") or not same_parameters or own.co_kwonlyargcount:
        raise TypeError(f"{cls.__name__} needs its own __init__ (a __post_init__, an InitVar or a keyword-only field)")
    namespace: dict[str, object] = {}
    parameters: list[str] = []
    stores: list[str] = []
    for field in fields:
        if field.default_factory is not dataclasses.MISSING:
            raise TypeError(f"{cls.__name__}.{field.name} has a default_factory: its own __init__ is needed")
        if field.default is dataclasses.MISSING:
            parameters.append(field.name)
        else:
            namespace[f"_default_{field.name}"] = field.default
            parameters.append(f"{field.name}=_default_{field.name}")
        namespace[f"_store_{field.name}"] = vars(cls)[field.name].__set__
        stores.append(f"    _store_{field.name}(self, {field.name})\n")
    # Generated, as the dataclass's own is: one parameter and one store per field, in field order.
    exec(f"def __init__(self, {', '.join(parameters)}):\n{''.join(stores) or '    pass'}\n", namespace)
    init = namespace["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"  # type: ignore[attr-defined]
    cls.__init__ = init  # type: ignore[assignment,method-assign]
    return cls
