"""Strict streaming readers and writers for IR collection formats.

``READERS`` maps a format name (as given to ``pooljudge import --format``) to
a function ``read(path) -> CollectionSource``.
"""
