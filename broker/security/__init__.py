"""Kafka's security rules as pure code (issue #17): SASL mechanisms, JAAS options, principals, credentials, ACLs.

Nothing here touches a socket or the event loop: the SASL servers are state machines fed the client's bytes, the
authorizer is a function of its ACLs and a request, so the listener wiring and every handler call them directly and
the unit tests under ``tests/security`` exercise Kafka's rules without a broker.
"""
