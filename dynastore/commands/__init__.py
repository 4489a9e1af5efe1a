"""The ``dynastore`` sub-commands a person runs against a server or a data directory."""
