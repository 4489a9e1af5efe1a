"""Global tables (issue 20): replicas of a table in other regions of the
same store, kept in step by multi-region replication.

A region is a namespace of the one store (dynastore/namespaces.py), so a
replica is simply the table of the same name in another region's
``Database``. Every member of a replica set carries the whole set in its
definition (``replicas.REPLICATION_EXTENSION``), so each region can describe
it and each write knows where it must go.

- ``regions``: the regions global tables may use, and their message;
- ``replicas``: the replica set in a table's definition and DescribeTable's
  ``Replicas`` / ``GlobalTableVersion`` / ``GlobalTableWitnesses``;
- ``replica_updates``: UpdateTable's ``ReplicaUpdates`` (Create, Update,
  Delete) with DynamoDB's preconditions and messages, settings and GSIs
  carried to every replica, the store's replica-set lock;
- ``backfill``: a new replica filled from the existing items (CREATING ->
  ACTIVE, resumed after a restart);
- ``queue``: what a write to a global table adds to its commit (the item's
  version, a durable queue row per other replica: the one write path's hook);
- ``replicator`` and ``pump``: queued writes applied after the lag, last
  writer wins, overwrites counted, capacity charged in the receiving region;
- ``strong``: multi-region strong consistency's rules and conflicts;
- ``legacy``: the 2017.11.29 calls as DynamoDB answers them today, and
  DescribeTableReplicaAutoScaling;
- ``admin``: ``/_dynastore/replication`` (lags, partitions, figures).
"""
