"""The whole test session: the dynamics under the process backend ``compiled`` (compile in the test
process when numba's cache lacks a kernel, as before first-use redirection), whatever the CLI's
default (``auto``: the numpy path while a background process compiles); the first-use tests
(tests/dynamics/test_first_use.py) run their commands in subprocesses with their own setting."""

import os

os.environ.setdefault("MBCOMPOSE_BACKEND", "compiled")
