"""On-demand backups and point-in-time recovery (issue 19, sections 1-2).

- ``pitr``: the change log a table keeps while PITR is on (or while a
  backup or an export reads it "as of" a time), and the internal interface
  the export code builds on: is PITR on, the restorable window, the table's
  items as of time T a page at a time.
- ``own_tables``: dynastore's own storage tables of this package (the
  change logs, the backup registry, a backup's items) and of exports/imports.
- ``registry``, ``jobs``, ``restore``: backups and restores, their
  background work and its recovery after a restart.

See docs/backups.md.
"""
