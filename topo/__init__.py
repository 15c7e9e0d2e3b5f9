"""Topologies and their Mininet realisation: the file format (``spec``), the leaf/spine builder
(``builder``), the P4 switch node (``p4node``), the RNIC host (``rnic_host``) and the launcher
that brings a topology up (``fabric``)."""
