"""Pipeline stages, configuration and the ``mbcompose`` command line."""
