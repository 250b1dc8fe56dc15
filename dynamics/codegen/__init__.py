"""Generated C of a model's dynamics and the ``codegen`` backend (issue 28).

:func:`generate_c` writes C99 source specialised to one model (ABA, RNEA, CRBA unrolled per body
with the joint axes and placements folded in, the force elements, and for embedded closed chains the
forward dynamics in independent coordinates with the closure solve); :func:`compile_model` compiles
it with the system C compiler and loads it (cffi), cached by a hash of the model and the generator, as a
:class:`CompiledModel` whose ``forward_dynamics(q, v, tau)`` is one call from Python (the arrays checked and
passed to C by :mod:`dynamics.codegen.fastcall`);
:mod:`dynamics.codegen.backend` evaluates the public functions with it (``backend("codegen")`` of
:mod:`dynamics.dispatch`).  See docs/codegen.md.
"""

from .build import CodegenUnavailable, CompiledModel, compile_model, compiler
from .generate import GeneratedC, generate_c
from .tree import CodegenUnsupported

__all__ = ["generate_c", "GeneratedC", "CodegenUnsupported", "CodegenUnavailable", "CompiledModel",
           "compile_model", "compiler"]
