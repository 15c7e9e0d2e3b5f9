"""Neutral protocol packages: what the controller and the tests use to talk to any target
(our switch or BMv2) through its protocols, never through our target's modules."""
