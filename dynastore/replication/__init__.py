"""Global tables (issue 20): replicas of a table in other regions of the
same store, kept in step by multi-region replication.

A region is a namespace of the one store (dynastore/namespaces.py), so a
replica is simply the table of the same name in another region's
``Database``. Every member of a replica set carries the whole set in its
definition (``replicas.REPLICATION_EXTENSION``), so each region can describe
it and each write knows where it must go.

- ``regions``: the regions global tables may use, and their message;
- ``replicas``: the replica set in a table's definition and DescribeTable's
  ``Replicas`` / ``GlobalTableVersion``;
- ``replica_updates``: UpdateTable's ``ReplicaUpdates`` (Create, Delete), with
  DynamoDB's preconditions and messages;
- ``backfill``: a new replica filled from the existing items (CREATING ->
  ACTIVE).
"""
