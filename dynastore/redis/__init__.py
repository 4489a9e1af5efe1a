"""The Redis protocol on dynastore's store (issue 22, docs/redis.md).

``resp`` is the wire format, ``keyspace`` the keys over the store,
``commands/`` one module per family with the one dispatch table
(``commands.COMMANDS``), ``server`` the listener on the engine's event loop.
"""
