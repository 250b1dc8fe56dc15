"""``python -m mbcompose``: the command line."""

from mbcompose.composer.cli import main

if __name__ == "__main__":
    main(prog_name="mbcompose")
