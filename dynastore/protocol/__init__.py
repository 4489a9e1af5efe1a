"""The wire layer: HTTP/1.1 servers and DynamoDB's JSON 1.0 protocol rules.

- ``app.py``: one request -> one reply (content types, targets, credentials
  presence, errors, the health check, routing of ``/_dynastore/`` admin calls).
- ``authorization.py``: DynamoDB's credential presence checks;
  ``sigv4.py`` verifies signatures against ``credentials.py``'s access keys
  (``dynastore serve --credentials``, docs/security.md); ``tls.py``: HTTPS.
- ``http.py``: HTTP/1.1 connections and their bounds, shared by both servers;
  imports nothing of the engine.
- ``server.py``: the single-process server (HTTP and the database on one loop:
  ``db.serve()``, ``dynastore serve --single-process``).
- ``front.py``, ``link.py``, ``engine.py``: ``dynastore serve``'s two processes
  (ADR 0003): the HTTP front, the framing between them, and the engine's side.
- ``group_commit.py``: item operations of one batch share a transaction (ADR 0002).
"""
