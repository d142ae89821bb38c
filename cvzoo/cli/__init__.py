"""The ``cvzoo`` command line: models, download, predict."""
