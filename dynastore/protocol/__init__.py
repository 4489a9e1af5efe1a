"""The wire layer: HTTP/1.1 server and DynamoDB's JSON 1.0 protocol rules.

- ``app.py``: one request -> one reply (content types, targets, credentials
  presence, errors, the health check, routing of ``/_dynastore/`` admin calls).
- ``authorization.py``: DynamoDB's credential presence checks (SigV4
  signature verification is a later issue).
- ``server.py``: the asyncio/httptools server and its bounds.
"""
