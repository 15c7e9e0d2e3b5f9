"""The switch process of the software v1model target: ports, traffic manager, link model,
MAC-level PFC, runtime CLI and the main loop that makes it usable like ``simple_switch_grpc``.
"""
