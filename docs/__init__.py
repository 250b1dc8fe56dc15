"""The documentation of mbcompose, installed with the package: ``mbcompose docs TOPIC`` prints a page.

Each ``NAME.md`` of this folder is the topic ``NAME`` (``pipeline-format`` also answers to ``pipeline``).
"""
