"""The P4Runtime side every party shares, independent of any one target.

- ``entries``: table entries, actions, clone sessions and their errors, as plain values;
- ``bytestrings``: P4Runtime binary strings <-> integers (spec section 8.3);
- ``schema``: a P4Info indexed by id; ``p4info``: the same by name, with checked encoders;
- ``codec``: the one translation between entries and P4Runtime protobufs, used by our
  P4Runtime server and by clients alike;
- ``errors``: the P4Runtime error type (with its status code) of both ends;
- ``formatting``: entries as people read them;
- ``switch_conn``: the client session with one switch (``interrupts``: Ctrl-C held back while
  it is in a call); ``runtime_cli``: the runtime-CLI client;
- ``wire``: the protobuf wire format of the hot messages, cut and written by hand;
- ``packets``: a packet-in as an in-process client receives it, without protobuf;
- ``thrift`` and ``bmv2_runtime``: BMv2's Thrift runtime protocol (``simple_switch_CLI``'s),
  which our switch serves too.

It depends only on netbase, the p4runtime protobufs and gRPC. Our switch (``p4switch``), the
controller, the lab and the tests build on it; it builds on none of them. ``wire`` and
``packets`` run compiled when built (``netbase.hotpath.DATA_PATH``: netbase, imported first, installs its finder).
"""

import netbase  # noqa: F401 (before any of this package's modules)
