"""``python -m cvzoo``: the command line (also installed as ``cvzoo``)."""

from cvzoo.cli.main import main

if __name__ == '__main__':
    raise SystemExit(main())
