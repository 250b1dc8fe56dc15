"""Frozen dataclasses built fast: :func:`record`, the one decorator of the package's immutable
records (the readers' assembly records, the graph stage's composites and reduced joints, the
dynamics model's body specs and force elements).

``dataclasses.dataclass(frozen=True)`` generates an ``__init__`` that sets every field through
``object.__setattr__``; a model of a robot builds thousands of such records, and that call is most
of their cost.  :func:`record` keeps everything else of the dataclass (fields, defaults, errors,
``__post_init__``, ``eq``/``hash``, ``replace``) and stores the fields in the instance's
``__dict__`` directly.
"""

from __future__ import annotations

from dataclasses import MISSING, dataclass, fields

__all__ = ["record"]


def record(cls=None, /, *, eq: bool = False):
    """``dataclasses.dataclass(frozen=True, eq=eq)`` whose ``__init__`` stores the fields in the
    instance's ``__dict__``: the same parameters, defaults, errors (an unknown keyword is a
    TypeError) and ``__post_init__`` as the dataclass's own, which calls ``object.__setattr__`` per
    field instead (three times the cost; readers build tens of thousands of these objects).
    ``dataclasses.replace`` builds through it too."""
    def wrap(c):
        c = dataclass(frozen=True, eq=eq)(c)
        c.__init__ = _stored_init(c)
        return c
    return wrap if cls is None else wrap(cls)


def _stored_init(cls):
    """The ``__init__`` of :func:`record` for the frozen dataclass ``cls`` (generated, as
    ``dataclasses`` generates its own)."""
    env, params, lines = {"MISSING": MISSING}, [], []
    for f in fields(cls):
        if not f.init:
            raise TypeError(f"record {cls.__qualname__}: field {f.name!r} has init=False (not supported)")
        if f.default is not MISSING:
            env[f"default_{f.name}"] = f.default
            params.append(f"{f.name}=default_{f.name}")
        elif f.default_factory is not MISSING:
            env[f"factory_{f.name}"] = f.default_factory
            params.append(f"{f.name}=MISSING")
            lines.append(f"    if {f.name} is MISSING:\n        {f.name} = factory_{f.name}()")
        else:
            params.append(f.name)
    lines.append("    d = self.__dict__")
    lines += [f"    d[{f.name!r}] = {f.name}" for f in fields(cls)]
    if hasattr(cls, "__post_init__"):
        lines.append("    self.__post_init__()")
    exec(f"def __init__(self, {', '.join(params)}):\n" + "\n".join(lines), env)
    init = env["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    return init
